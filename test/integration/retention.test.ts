import { expect } from 'chai';
import { buildConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/config/config.js';
import { newId } from '../../src/lib/ids.js';
import { insertEvents } from '../../src/modules/notifying/events/events.repo.js';
import { insertInbound } from '../../src/modules/receiving/inbound/inbound.repo.js';
import { retentionService } from '../../src/modules/operations/retention/retention.service.js';
import { addSuppression, findSuppression } from '../../src/modules/sending/suppressions/suppressions.repo.js';
import type { Store } from '../../src/store/store.js';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { startHookWorld, type HookWorld } from '../helpers/hook-world.js';
import type { HttpsReceiver } from '../helpers/https-receiver.js';
import { waitFor } from '../helpers/wait.js';

const DAY = 86_400_000;
const SIM = 'simulator.posthorn.test';
let n = 0;

describe('retention config (issue 24)', function () {
  it('keeps 30 days by default, 0 for ever, and refuses a schedule that is no cron expression', function () {
    expect(buildConfig({ data_dir: '/x' }, null).retention).to.deep.equal({ days: 30, schedule: '43 * * * *' });
    expect(
      buildConfig({ data_dir: '/x', retention: { days: 0, schedule: '*/5 * * * * *' } }, null).retention,
    ).to.deep.equal({ days: 0, schedule: '*/5 * * * * *' });
    expect(() => buildConfig({ data_dir: '/x', retention: { days: -1 } }, null)).to.throw(
      ConfigError,
      'retention.days',
    );
    expect(() => buildConfig({ data_dir: '/x', retention: { schedule: 'every hour' } }, null)).to.throw(
      ConfigError,
      'retention.schedule',
    );
  });
});

eachDatabase('retention job (issue 24)', (db) => {
  let hw: HookWorld;
  let hooks: HttpsReceiver;
  let api: TestApi;

  before(async function () {
    hw = await startHookWorld();
    hooks = hw.hooks;
    // The app keeps the real clock: ids never go back, so an id made on a clock moved ahead would
    // carry that time into every later id of the process. The job's clock is moved instead.
    // A failed webhook attempt is tried again 2 s later.
    api = await startTestApi(db().store, hw.config({ retry_schedule: ['0s', '2s'] }), { roles: { webhooks: true } });
  });
  after(async function () {
    await api.stop();
    await hw.stop();
  });

  const knex = () => db().store.knex;
  /** retention.days 30 with its cutoff at `cutoff` (now, unless given) */
  const pruner = (cutoff = Date.now(), opts: { batch?: number; store?: Store; days?: number } = {}) =>
    retentionService(
      { store: opts.store ?? db().store, clock: { now: () => cutoff + 30 * DAY } },
      { days: opts.days ?? 30, ...(opts.batch ? { batch: opts.batch } : {}) },
    );
  /** a moment that sorts after everything stored so far and before anything stored next */
  const aMomentLater = async () => {
    await new Promise((r) => setTimeout(r, 5));
    const at = Date.now();
    await new Promise((r) => setTimeout(r, 5));
    return at;
  };

  async function send(t: Tenant, to: string, extra: Record<string, unknown> = {}): Promise<string> {
    const res = await t.api.post('/v1/emails', {
      from: 'a@example.test',
      to: [to],
      subject: 'Kept?',
      text: 'body',
      ...extra,
    });
    expect(res.status, res.text).to.equal(202);
    return res.body.id as string;
  }

  /** Every row an email has: itself, its recipients and queue rows, its events, their webhook deliveries and attempts. */
  async function rowsOf(emailId: string) {
    const count = async (table: string, column: string) =>
      Number(((await knex()(table).count({ n: '*' }).where(column, emailId)) as Array<{ n: number | string }>)[0].n);
    const eventIds = ((await knex()('events').select('id').where('email_id', emailId)) as Array<{ id: string }>).map(
      (e) => e.id,
    );
    const deliveries = eventIds.length
      ? ((await knex()('webhook_deliveries').select('id', 'state').whereIn('event_id', eventIds)) as Array<{
          id: string;
          state: string;
        }>)
      : [];
    const attempts = deliveries.length
      ? (
          (await knex()('webhook_attempts')
            .select('delivery_id')
            .whereIn(
              'delivery_id',
              deliveries.map((d) => d.id),
            )) as unknown[]
        ).length
      : 0;
    return {
      emails: await count('emails', 'id'),
      recipients: await count('email_recipients', 'email_id'),
      queueRows: await count('outbound_queue', 'email_id'),
      events: eventIds.length,
      deliveries: deliveries.map((d) => d.state),
      attempts,
    };
  }

  const statusOf = async (id: string) =>
    ((await knex()('emails').select('status').where({ id }).first()) as { status: string }).status;
  const gone = { emails: 0, recipients: 0, queueRows: 0, events: 0, deliveries: [], attempts: 0 };

  it('deletes an old delivered email with its recipients, events, webhook deliveries and their attempts; keeps a recent one whole', async function () {
    const t = await api.tenant();
    expect(
      (
        await t.api.post('/v1/webhooks', {
          url: hooks.url(`/ok/retention-${++n}`),
          events: ['email.sent', 'email.delivered'],
        })
      ).status,
    ).to.equal(201);
    const delivered = (id: string) =>
      waitFor(
        async () =>
          ((r) => (r.attempts === 2 && r.deliveries.every((s) => s === 'succeeded') ? r : null))(await rowsOf(id)),
        10_000,
        `the webhooks of ${id} delivered`,
      );
    const old = await send(t, `delivered@${SIM}`);
    expect(await delivered(old)).to.deep.include({ emails: 1, recipients: 1, events: 2 });
    const cutoff = await aMomentLater();
    const recent = await send(t, `delivered@${SIM}`);
    await delivered(recent);

    const report = await pruner(cutoff).prune();
    expect(await rowsOf(old)).to.deep.equal(gone);
    expect((await t.api.get(`/v1/emails/${old}`)).status).to.equal(404);
    expect(await rowsOf(recent)).to.deep.equal({
      emails: 1,
      recipients: 1,
      queueRows: 0,
      events: 2,
      deliveries: ['succeeded', 'succeeded'],
      attempts: 2,
    });
    expect(report.deleted.emails).to.be.at.least(1);
    expect(report.deleted.webhook_deliveries).to.be.at.least(2);
    expect(report.deleted.webhook_attempts).to.equal(report.deleted.webhook_deliveries);
  });

  it('keeps old emails that are scheduled, deferred or ambiguous, and deletes an old bounced one', async function () {
    const t = await api.tenant();
    const scheduled = await send(t, `delivered@${SIM}`, {
      scheduled_at: new Date(Date.now() + 20 * DAY).toISOString(),
    });
    const deferred = await send(t, `delayed@${SIM}`);
    const ambiguous = await send(t, `ambiguous@${SIM}`);
    const bounced = await send(t, `bounced@${SIM}`);
    expect([
      await statusOf(scheduled),
      await statusOf(deferred),
      await statusOf(ambiguous),
      await statusOf(bounced),
    ]).to.deep.equal(['scheduled', 'queued', 'ambiguous', 'failed']);
    const before = await Promise.all([scheduled, deferred, ambiguous].map(rowsOf));

    await pruner(Date.now() + DAY).prune();
    expect(await Promise.all([scheduled, deferred, ambiguous].map(rowsOf))).to.deep.equal(before);
    expect(before.map((r) => r.emails)).to.deep.equal([1, 1, 1]);
    expect(await rowsOf(bounced)).to.deep.equal(gone);
  });

  it('keeps an old event while its webhook delivery is pending, and deletes it once delivered', async function () {
    const t = await api.tenant();
    const path = `/toggle/retention-${++n}`;
    expect((await t.api.post('/v1/webhooks', { url: hooks.url(path), events: ['email.delivered'] })).status).to.equal(
      201,
    );
    const id = await send(t, `delivered@${SIM}`);
    // the first attempt got a 503; the next one is 2 s away
    await waitFor(async () => (await rowsOf(id)).attempts === 1, 10_000, 'the first webhook attempt');

    await pruner(Date.now() + DAY).prune();
    expect(await rowsOf(id)).to.deep.equal({
      emails: 1,
      recipients: 1,
      queueRows: 0,
      events: 2,
      deliveries: ['pending'],
      attempts: 1,
    });

    hooks.enable(path);
    await waitFor(async () => (await rowsOf(id)).deliveries[0] === 'succeeded', 10_000, 'the retry delivered');
    await pruner(Date.now() + DAY).prune();
    expect(await rowsOf(id)).to.deep.equal(gone);
  });

  it('keeps everything with retention.days 0', async function () {
    const t = await api.tenant();
    const id = await send(t, `delivered@${SIM}`);
    const farAhead = Date.now() + 1000 * DAY;
    expect(await pruner(farAhead, { days: 0 }).prune()).to.deep.include({ rows: 0 });
    expect((await rowsOf(id)).emails).to.equal(1);
    // the same email goes with a retention of 30 days
    await pruner(farAhead).prune();
    expect(await rowsOf(id)).to.deep.equal(gone);
  });

  it('deletes more emails than a batch holds, a transaction per batch, while accepts go on', async function () {
    const t = await api.tenant();
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) ids.push(await send(t, `user${i}@${SIM}`));
    const store = db().store;
    let transactions = 0;
    const counting: Store = { ...store, tx: (fn) => (transactions++, store.tx(fn)) };
    const order: string[] = [];
    const pruned = pruner(await aMomentLater(), { batch: 2, store: counting })
      .prune()
      .then((r) => (order.push('pruned'), r));
    const accepted = send(t, `user-meanwhile@${SIM}`).then((id) => (order.push('accepted'), id));
    const [report, meanwhile] = await Promise.all([pruned, accepted]);
    expect(order).to.deep.equal(['accepted', 'pruned']);
    expect(report.deleted.emails).to.be.at.least(23);
    expect(await Promise.all(ids.map(rowsOf))).to.deep.equal(ids.map(() => gone));
    expect(transactions).to.be.at.least(12);
    expect((await rowsOf(meanwhile)).emails).to.equal(1);
  });

  it('deletes old inbound emails and events of no email; never a suppression', async function () {
    const t = await api.tenant();
    const projectId = t.project.id;
    const inbound = async () => {
      const at = Date.now();
      const m = {
        id: newId('inbound', at),
        projectId,
        mailFrom: 'x@example.test',
        rcptTo: ['in@shop.test'],
        from: 'x@example.test',
        to: ['in@shop.test'],
        cc: [],
        subject: 'hi',
        messageId: null,
        text: 'hi',
        html: null,
        headers: [],
        attachments: [],
        size: 3,
        createdAt: at,
      };
      const event = {
        id: newId('event', at),
        projectId,
        type: 'email.received' as const,
        emailId: null,
        recipient: 'in@shop.test',
        simulated: false,
        data: { inbound_id: m.id },
        createdAt: at,
      };
      await db().store.tx(async (trx) => {
        await insertInbound(trx, m, Buffer.from('raw message'));
        await insertEvents(trx, [event]);
      });
      return { inboundId: m.id, eventId: event.id };
    };
    const old = await inbound();
    const email = await send(t, `delivered@${SIM}`);
    await addSuppression(knex(), {
      projectId,
      address: 'gone@example.test',
      reason: 'bounce',
      emailId: email,
      createdAt: Date.now(),
    });
    const cutoff = await aMomentLater();
    const recent = await inbound();

    const report = await pruner(cutoff).prune();
    const exists = async (table: string, id: string) => Boolean(await knex()(table).select('id').where({ id }).first());
    expect([await exists('inbound_emails', old.inboundId), await exists('events', old.eventId)]).to.deep.equal([
      false,
      false,
    ]);
    expect([await exists('inbound_emails', recent.inboundId), await exists('events', recent.eventId)]).to.deep.equal([
      true,
      true,
    ]);
    expect(report.deleted.inbound_emails).to.be.at.least(1);
    expect(await rowsOf(email)).to.deep.equal(gone);
    expect(await findSuppression(knex(), projectId, 'gone@example.test', Date.now())).to.include({
      emailId: email,
      reason: 'bounce',
    });
  });

  it('runs as the appliance job on retention.schedule', async function () {
    const t = await api.tenant();
    const id = await send(t, `delivered@${SIM}`);
    // a second app over the same store with its jobs, every second, 31 days ahead: it makes no ids
    const jobs = await startTestApi(
      db().store,
      { retention: { days: 30, schedule: '* * * * * *' } },
      { clock: { now: () => Date.now() + 31 * DAY }, roles: { jobs: true } },
    );
    try {
      await waitFor(async () => (await rowsOf(id)).emails === 0, 10_000, 'the job to prune the email');
    } finally {
      await jobs.stop();
    }
    expect(await rowsOf(id)).to.deep.equal(gone);
  });
});
