import type { Knex } from 'knex';
import { expect } from 'chai';
import { MessageChannel } from 'node:worker_threads';
import { eachDatabase } from '../helpers/databases.js';
import { silentLogger } from '../../src/log/logger.js';
import { systemClock } from '../../src/lib/time.js';
import { ApiError } from '../../src/lib/errors.js';
import { AcceptQueue } from '../../src/modules/sending/emails/accept-batch.js';
import type { AcceptRequest } from '../../src/modules/sending/emails/accept-rules.js';
import { emailOf } from '../helpers/accept.js';
import { prepareEmail } from '../../src/modules/sending/emails/prepare.js';
import { attachmentsOf } from '../../src/modules/sending/emails/email-attachments.repo.js';
import { findEmail } from '../../src/modules/sending/emails/emails.repo.js';
import { eventsOfEmail } from '../../src/modules/notifying/events/events.repo.js';
import { addSuppression } from '../../src/modules/sending/suppressions/suppressions.repo.js';
import { createProject } from '../../src/modules/account/projects/projects.service.js';
import type { Project } from '../../src/modules/account/projects/projects.repo.js';
import { GroupCommit } from '../../src/store/group-commit.js';
import type { Store } from '../../src/store/store.js';
import {
  fromWire,
  MAX_REQUESTS_PER_MESSAGE,
  outcomeOf,
  RemoteAcceptor,
  storeForRelay,
  type AcceptOutcome,
} from '../../src/roles/accept-relay.js';

const request = (p: Project, i: number, extra: Partial<AcceptRequest> = {}): AcceptRequest => ({
  project: p,
  environment: 'test' as const,
  prepared: prepareEmail({ from: 'a@example.test', to: [`r${i}@example.test`], subject: 's', text: 't' }, Date.now()),
  attachments: [],
  requestId: `req_${i}`,
  idempotency: null,
  ...extra,
});

eachDatabase('the accept group commit', (db, kind) => {
  it("the thread's group commit: a job that fails in a shared commit takes back its own writes only", async function () {
    const { store } = db();
    const writer = new GroupCommit(store);
    const key = (n: number) => `gc-test-${Date.now()}-${n}`;
    const keys = [key(1), key(2), key(3)];
    const put = (k: string) => (trx: Knex.Transaction) => trx('meta').insert({ key: k, value: 'v' });
    // submitted in one turn of the event loop: one commit for the three
    const results = await Promise.allSettled([
      writer.run(put(keys[0])),
      writer.run(async (trx) => {
        await put(keys[1])(trx);
        throw new Error('this job fails after writing');
      }),
      // a job may open its own nested transaction
      writer.run((trx) => trx.transaction((inner) => put(keys[2])(inner))),
    ]);
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason.message).to.equal('this job fails after writing');
    const stored = (await store.knex('meta').whereIn('key', keys).pluck('key')) as string[];
    expect(stored.sort()).to.deep.equal([keys[0], keys[2]].sort());
  });

  // SQLite itself rolls the whole transaction back on some errors (SQLITE_FULL, I/O errors); a job
  // that ends it stands in for those here. PostgreSQL keeps a transaction usable after an error in
  // a savepoint, so there the case does not arise.
  if (kind === 'sqlite') {
    it("the thread's group commit: a job whose error took the whole transaction with it fails the batch, and nothing of it is stored", async function () {
      const { store } = db();
      const writer = new GroupCommit(store);
      const keys = [1, 2, 3].map((n) => `gc-lost-${Date.now()}-${n}`);
      const put = (k: string) => (trx: Knex.Transaction) => trx('meta').insert({ key: k, value: 'v' });
      const results = await Promise.allSettled([
        writer.run(put(keys[0])),
        writer.run(async (trx) => {
          await put(keys[1])(trx);
          await trx.raw('ROLLBACK');
          throw new Error('the database rolled the transaction back');
        }),
        writer.run(put(keys[2])),
      ]);
      // none is reported stored, so none is answered 202 (the accept queue then stores each alone)
      expect(results.map((r) => r.status)).to.deep.equal(['rejected', 'rejected', 'rejected']);
      expect(await store.knex('meta').whereIn('key', keys)).to.have.length(0);
      // and the writer goes on
      await writer.run(put(`${keys[0]}-after`));
      expect(await store.knex('meta').where({ key: `${keys[0]}-after` })).to.have.length(1);
    });
  }

  it('stores the other requests of a batch when one of them cannot be stored', async function () {
    const { store } = db();
    const accept = new AcceptQueue(store, systemClock, silentLogger(), {
      hostname: 'mta.test',
      routeOf: () => '',
      writer: new GroupCommit(store),
    });
    const project = await createProject({ store, clock: systemClock }, { name: `p${Date.now()}` });
    // a project that does not exist: its email violates a foreign key inside the shared transaction
    const ghost: Project = { ...project, id: 'prj_doesnotexist' };
    // submitted in one turn of the event loop: they share one transaction
    const results = await Promise.allSettled([
      emailOf(accept.submit(request(project, 1))),
      emailOf(accept.submit(request(ghost, 2))),
      emailOf(accept.submit(request(project, 3))),
    ]);
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).to.be.instanceOf(ApiError);
    const stored = await store.knex('emails').where({ project_id: project.id }).select<Array<{ id: string }>>('id');
    expect(stored.map((r) => r.id).sort()).to.deep.equal(
      [
        (results[0] as PromiseFulfilledResult<{ id: string }>).value.id,
        (results[2] as PromiseFulfilledResult<{ id: string }>).value.id,
      ].sort(),
    );
    expect(await store.knex('emails').where({ project_id: ghost.id })).to.have.length(0);
  });

  it("checks each request of a batch against its own project's suppression list: the address another project suppressed is sent to", async function () {
    const { store } = db();
    // every batch of the accept queue is one job of the thread's group commit
    let batches = 0;
    const writer = new (class extends GroupCommit {
      override runCommitted<T>(fn: (trx: Knex.Transaction) => Promise<T>) {
        batches++;
        return super.runCommitted(fn);
      }
    })(store);
    const accept = new AcceptQueue(store, systemClock, silentLogger(), {
      hostname: 'mta.test',
      routeOf: () => '',
      writer,
    });
    const a = await createProject({ store, clock: systemClock }, { name: `supp-a${Date.now()}` });
    const b = await createProject({ store, clock: systemClock }, { name: `supp-b${Date.now()}` });
    await addSuppression(store.knex, {
      projectId: a.id,
      address: 'x@example.test',
      reason: 'complaint',
      emailId: null,
      createdAt: Date.now(),
    });
    const toX = (p: Project, i: number) =>
      request(p, i, {
        prepared: prepareEmail({ from: 'a@example.test', to: ['x@example.test'], subject: 's', text: 't' }, Date.now()),
      });

    // both orders within one batch: whichever project comes first, each is checked against its own list
    for (const order of [
      [a, b],
      [b, a],
    ]) {
      const before = batches;
      // submitted in one turn of the event loop: they share one transaction
      const results = await Promise.allSettled(order.map((p, i) => emailOf(accept.submit(toX(p, i)))));
      expect(batches - before, 'the two requests were one batch').to.equal(1);
      const of = (p: Project) => results[order.indexOf(p)];

      const refused = of(a);
      expect(refused.status).to.equal('rejected');
      expect((refused as PromiseRejectedResult).reason)
        .to.be.instanceOf(ApiError)
        .and.include({ status: 422, code: 'recipient_suppressed' });

      const sent = of(b);
      expect(sent.status, String((sent as PromiseRejectedResult).reason)).to.equal('fulfilled');
      const email = (
        sent as PromiseFulfilledResult<{
          id: string;
          status: string;
          recipients: Array<{ address: string; status: string }>;
        }>
      ).value;
      expect(email.status).to.equal('queued');
      expect(email.recipients.map((r) => `${r.address}:${r.status}`)).to.deep.equal(['x@example.test:queued']);
      // as stored: the recipient is not suppressed, and no email.suppressed was written for it
      const stored = (await findEmail(store.knex, b.id, email.id))!;
      expect(stored.recipients.map((r) => r.status)).to.not.include('suppressed');
      expect((await eventsOfEmail(store.knex, email.id)).map((e) => e.type)).to.not.include('email.suppressed');
    }
    // project A's refusals stored nothing; B's two emails are there
    expect(await store.knex('emails').where({ project_id: a.id })).to.have.length(0);
    expect(await store.knex('emails').where({ project_id: b.id })).to.have.length(2);
  });

  it('a batch committed but not made durable (the fsync failed) is answered 500 and never stored a second time', async function () {
    const { store } = db();
    // the disk refuses the fsync after the commit
    const failingDisk: Store = {
      ...store,
      commit: async (fn) => ({
        value: (await store.commit(fn)).value,
        durable: Promise.reject(new Error('EIO: fsync failed')),
        seq: null,
      }),
    };
    const accept = new AcceptQueue(failingDisk, systemClock, silentLogger(), {
      hostname: 'mta.test',
      routeOf: () => '',
      writer: new GroupCommit(failingDisk),
    });
    const project = await createProject({ store, clock: systemClock }, { name: `nd${Date.now()}` });
    const results = await Promise.allSettled([
      emailOf(accept.submit(request(project, 1))),
      emailOf(accept.submit(request(project, 2))),
    ]);
    for (const r of results)
      expect((r as PromiseRejectedResult).reason).to.include({ status: 500, code: 'internal_error' });
    // the commit happened once: the two emails exist once each, whatever the client does next
    expect(await store.knex('emails').where({ project_id: project.id })).to.have.length(2);
  });

  it('across threads (serve): a burst larger than one message goes over in parts, and every request of it is answered and stored once', async function () {
    const { store } = db();
    const queue = new AcceptQueue(store, systemClock, silentLogger(), {
      hostname: 'mta.test',
      routeOf: () => '',
      writer: new GroupCommit(store),
    });
    const project = await createProject({ store, clock: systemClock }, { name: `burst${Date.now()}` });
    const { port1, port2 } = new MessageChannel();
    const sizes: number[] = [];
    const remote = new RemoteAcceptor(
      (id, requests) => {
        sizes.push(requests.length);
        port1.postMessage({ id, requests });
      },
      () => expect.fail('no commit number was expected'),
    );
    port2.on('message', (m: { id: number; requests: AcceptRequest[] }) => {
      void Promise.allSettled(m.requests.map((r) => storeForRelay(queue, fromWire(r)))).then((s) =>
        port2.postMessage({ id: m.id, outcomes: s.map(outcomeOf) }),
      );
    });
    port1.on('message', (m: { id: number; outcomes: AcceptOutcome[] }) => remote.answered(m.id, m.outcomes));
    try {
      // one turn of the event loop, as when a burst of requests is read at once
      const n = 2 * MAX_REQUESTS_PER_MESSAGE + 5;
      const emails = await Promise.all(
        Array.from({ length: n }, (_, i) => emailOf(remote.submit(request(project, i)))),
      );
      expect(sizes).to.deep.equal([MAX_REQUESTS_PER_MESSAGE, MAX_REQUESTS_PER_MESSAGE, 5]);
      // each request got its own email back, in order
      expect(emails.map((e) => e.recipients[0].address)).to.deep.equal(
        Array.from({ length: n }, (_, i) => `r${i}@example.test`),
      );
      const stored = (await store.knex('emails').where({ project_id: project.id }).pluck('id')) as string[];
      expect(stored.sort()).to.deep.equal(emails.map((e) => e.id).sort());
    } finally {
      port1.close();
    }
  });

  it('across threads (serve): attachments arrive whole, refusals arrive as the same API errors, and nothing is left hanging when the other side goes', async function () {
    const { store } = db();
    const queue = new AcceptQueue(store, systemClock, silentLogger(), {
      hostname: 'mta.test',
      routeOf: () => '',
      writer: new GroupCommit(store),
    });
    const project = await createProject({ store, clock: systemClock }, { name: `relay${Date.now()}` });
    await addSuppression(store.knex, {
      projectId: project.id,
      address: 'gone@example.test',
      reason: 'bounce',
      emailId: null,
      createdAt: Date.now(),
    });
    // the two ends as in serve: structured cloning between them
    const { port1, port2 } = new MessageChannel();
    // this store has no shared fsync thread: the other side answers once the commit is on disk
    const remote = new RemoteAcceptor(
      (id, requests) => port1.postMessage({ id, requests }),
      () => expect.fail('no commit number was expected'),
    );
    port2.on('message', (m: { id: number; requests: AcceptRequest[] }) => {
      void Promise.allSettled(m.requests.map((r) => storeForRelay(queue, fromWire(r)))).then((s) =>
        port2.postMessage({ id: m.id, outcomes: s.map(outcomeOf) }),
      );
    });
    port1.on('message', (m: { id: number; outcomes: AcceptOutcome[] }) => remote.answered(m.id, m.outcomes));
    try {
      const content = Buffer.from([0, 1, 2, 250, 251, 252, 13, 10]);
      const [withFile, refused] = await Promise.allSettled([
        emailOf(
          remote.submit(
            request(project, 1, {
              attachments: [{ filename: 'a.bin', contentType: 'application/octet-stream', contentId: null, content }],
            }),
          ),
        ),
        emailOf(
          remote.submit({
            ...request(project, 2),
            prepared: prepareEmail(
              { from: 'a@example.test', to: ['gone@example.test'], subject: 's', text: 't' },
              Date.now(),
            ),
          }),
        ),
      ]);
      expect(withFile.status).to.equal('fulfilled');
      const email = (withFile as PromiseFulfilledResult<{ id: string; status: string }>).value;
      expect(email.status).to.equal('queued');
      const stored = await attachmentsOf(store.knex, email.id);
      expect(stored.map((a) => a.content.equals(content))).to.deep.equal([true]);
      const reason = (refused as PromiseRejectedResult).reason as ApiError;
      expect(reason).to.be.instanceOf(ApiError);
      expect(reason).to.include({ status: 422, code: 'recipient_suppressed' });

      // the other side stops answering: pending requests fail, later ones are refused at once
      port2.removeAllListeners('message');
      const pending = emailOf(remote.submit(request(project, 3)));
      await new Promise((r) => setTimeout(r, 20));
      remote.close('the background thread has stopped');
      const lost = (await pending.catch((e: unknown) => e)) as ApiError;
      expect(lost).to.include({ status: 500, code: 'internal_error' });
      const later = (await emailOf(remote.submit(request(project, 4))).catch((e: unknown) => e)) as ApiError;
      expect(later).to.include({ status: 503, code: 'service_unavailable' });
    } finally {
      port1.close();
    }
  });
});
