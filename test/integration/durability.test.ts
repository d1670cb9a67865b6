import { expect } from 'chai';
import { startServe, writeConfig, runCli } from '../helpers/process.js';
import { client } from '../helpers/http.js';
import { PG_URL, freshPg, type TestDatabase } from '../helpers/databases.js';
import { startDnsWorld, type DnsWorld } from '../helpers/dns-world.js';
import { startSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { routeSinkDomains, verifiedDomain } from '../helpers/live.js';
import { waitFor } from '../helpers/wait.js';
import type { Tenant } from '../helpers/api.js';
import { startReceiver } from '../helpers/https-receiver.js';

const SIM = 'simulator.posthorn.test';

describe('a 202 survives kill -9 (SQLite, synchronous=FULL)', function () {
  this.timeout(90_000);

  it('every email answered 202 before the process was killed exists after the restart', async function () {
    const { path } = writeConfig({ limits: { requests_per_second: 100_000 } });
    const first = await startServe(path);
    const key = first.output().match(/ph_test_[A-Za-z0-9]{40}/)![0];
    const api = client(first.baseUrl, key);
    const acknowledged: string[] = [];
    let stop = false;
    // a burst from 32 clients; the process is killed while requests are still arriving
    const clients = Array.from({ length: 32 }, async (_, c) => {
      for (let i = 0; !stop; i++) {
        const res = await api
          .post('/v1/emails', {
            from: 'a@example.test',
            to: [`delivered+${c}-${i}@${SIM}`],
            subject: `burst ${c}-${i}`,
            text: 'x',
          })
          .catch(() => null);
        if (res?.status === 202) acknowledged.push(res.body.id);
      }
    });
    await waitFor(async () => acknowledged.length >= 400, 30_000, '400 acknowledged sends');
    first.child.kill('SIGKILL');
    stop = true;
    await first.exited;
    await Promise.all(clients);
    const ids = [...acknowledged];

    const second = await startServe(path);
    try {
      const api2 = client(second.baseUrl, key);
      const missing: string[] = [];
      for (const id of ids) {
        const res = await api2.get(`/v1/emails/${id}`);
        if (res.status !== 200) missing.push(`${id}: ${res.status}`);
      }
      expect(missing, `acknowledged but lost after kill -9: ${missing.length} of ${ids.length}`).to.deep.equal([]);
    } finally {
      await second.stop();
    }
  });
});

if (PG_URL) {
  describe('two serve processes on one PostgreSQL share the queue @pg', function () {
    this.timeout(180_000);
    let db: TestDatabase;
    let world: DnsWorld;
    let sink: SmtpSink;

    before(async function () {
      db = await freshPg();
      world = await startDnsWorld();
      sink = await startSink();
      routeSinkDomains(world);
    });
    after(async function () {
      await sink.stop();
      await world.stop();
      await db.drop();
    });

    it('deliver 500 live emails exactly once each', async function () {
      const base = {
        database: { client: 'pg', url: db.options.url },
        outbound: { hostname: 'mta.pair.test', mx_port: sink.port },
        dns: { resolvers: [world.address], zone: 'dkim.pair.test' },
        smtp: { inbound: { enabled: false }, submission: { enabled: false } },
        limits: { requests_per_second: 100_000 },
      };
      const a = await startServe(writeConfig(base).path);
      const b = await startServe(writeConfig(base).path);
      try {
        const cfg = writeConfig(base).path;
        const project = (await runCli(['project', 'create', '--name', 'pair', '--approved', '--json', '--config', cfg]))
          .json;
        const key = (
          await runCli(['key', 'create', '--project', project.id, '--mode', 'live', '--json', '--config', cfg])
        ).json.key as string;
        const t = { api: client(a.baseUrl, key) } as Tenant;
        const d = await verifiedDomain(t, world);
        const apis = [client(a.baseUrl, key), client(b.baseUrl, key)];
        const to = Array.from({ length: 500 }, (_, i) => `pair${i}@ok.test`);
        for (let i = 0; i < to.length; i += 25) {
          await Promise.all(
            to.slice(i, i + 25).map((addr, j) =>
              apis[(i + j) % 2]
                .post('/v1/emails', {
                  from: `a@${d.domain}`,
                  to: [addr],
                  subject: 'pair',
                  text: 'x',
                })
                .then((r) => expect(r.status).to.equal(202)),
            ),
          );
        }
        await waitFor(async () => sink.messages.length >= 500, 120_000, '500 messages at the sink');
        await new Promise((r) => setTimeout(r, 2000));
        const counts = new Map<string, number>();
        for (const m of sink.messages) for (const r of m.envelope.to) counts.set(r, (counts.get(r) ?? 0) + 1);
        expect(to.filter((addr) => counts.get(addr) !== 1)).to.deep.equal([]);
        expect(sink.messages).to.have.length(500);
      } finally {
        await Promise.all([a.stop(), b.stop()]);
      }
    });
  });
}

describe('webhook delivery survives kill -9 of the dispatcher mid-request', function () {
  this.timeout(60_000);

  it('sends the same event again after the restart, and it is delivered', async function () {
    const world = await startDnsWorld();
    const hooks = await startReceiver();
    hooks.slowMs = 3000;
    world.add('hooks.test', 'A', '127.0.0.1');
    const { path } = writeConfig({
      dns: { resolvers: [world.address] },
      network: { allow_private: true },
      webhooks: { ca_file: hooks.caFile },
      limits: { requests_per_second: 100_000 },
    });
    const first = await startServe(path);
    const key = first.output().match(/ph_test_[A-Za-z0-9]{40}/)![0];
    try {
      const api = client(first.baseUrl, key);
      const hook = (await api.post('/v1/webhooks', { url: hooks.url('/slow/kill9'), events: ['email.delivered'] }))
        .body;
      const email = (
        await api.post('/v1/emails', { from: 'a@example.test', to: [`delivered@${SIM}`], subject: 'x', text: 'y' })
      ).body;
      const firstTry = await hooks.waitFor((r) => r.path === '/slow/kill9', 15_000, 'the first, slow attempt');
      first.child.kill('SIGKILL');
      await first.exited;
      const second = await startServe(path);
      try {
        const again = await hooks.waitFor(
          (r) => r.path === '/slow/kill9' && r !== firstTry,
          15_000,
          'the attempt after the restart',
        );
        expect(again.json.id).to.equal(firstTry.json.id);
        expect(again.json.data.email_id).to.equal(email.id);
        const api2 = client(second.baseUrl, key);
        const log = await waitFor(
          async () => {
            const d = (await api2.get(`/v1/webhooks/${hook.id}/deliveries`)).body.data[0];
            return d?.status === 'succeeded' ? d : null;
          },
          15_000,
          'the delivery to succeed',
        );
        expect(log.event_id).to.equal(firstTry.json.id);
      } finally {
        await second.stop();
      }
    } finally {
      if (first.child.exitCode === null && first.child.signalCode === null) await first.stop();
      await hooks.stop();
      await world.stop();
    }
  });
});

/**
 * A send with an Idempotency-Key whose process is killed with kill -9 while it
 * still downloads an attachment: nothing was stored for it, so the client's
 * prompt retry (on the restarted process, or on another process of the same
 * PostgreSQL database) is accepted, once, and a further retry is its replay.
 */
for (const kind of PG_URL ? (['sqlite', 'pg'] as const) : (['sqlite'] as const)) {
  describe(`an Idempotency-Key send cut off by kill -9 is accepted when retried at once [${kind}]${kind === 'pg' ? ' @pg' : ''}`, function () {
    this.timeout(90_000);

    it('answers the retry 202 (not 409), stores the email once, and replays it to the next retry', async function () {
      const world = await startDnsWorld();
      const files = await startReceiver();
      world.add('hooks.test', 'A', '127.0.0.1');
      // the first download never gets its answer: the process is killed meanwhile
      let holding = true;
      files.setBehaviour('/held/', (_req, answer) => {
        if (!holding) answer(200, 'a,b\n1,2\n', { 'content-type': 'text/csv' });
      });
      const db = kind === 'pg' ? await freshPg() : null;
      const base = {
        dns: { resolvers: [world.address] },
        network: { allow_private: true },
        webhooks: { ca_file: files.caFile },
        ...(db ? { database: { client: 'pg', url: db.options.url } } : {}),
      };
      const { path } = writeConfig(base);
      const first = await startServe(path);
      // SQLite: the same data directory after a restart; PostgreSQL: a second process that stays up
      let survivor = kind === 'pg' ? await startServe(writeConfig(base).path) : null;
      try {
        const key = first.output().match(/ph_test_[A-Za-z0-9]{40}/)![0];
        const body = {
          from: 'a@example.test',
          to: [`delivered@${SIM}`],
          subject: 'cut off',
          text: 'x',
          attachments: [{ path: files.url('/held/report.csv') }],
        };
        const headers = { 'Idempotency-Key': `cut-${Date.now()}` };
        const cut = client(first.baseUrl, key)
          .post('/v1/emails', body, headers)
          .catch((e: unknown) => e);
        await files.waitFor(
          (r) => r.path === '/held/report.csv',
          15_000,
          'the attachment download of the first request',
        );
        first.child.kill('SIGKILL');
        await first.exited;
        await cut;
        survivor ??= await startServe(path);
        holding = false;
        const api = client(survivor.baseUrl, key);
        const retry = await api.post('/v1/emails', body, headers);
        expect(retry.status, retry.text).to.equal(202);
        const again = await api.post('/v1/emails', body, headers);
        expect(again.status, again.text).to.equal(202);
        expect(again.body).to.deep.equal(retry.body);
        expect((await api.get('/v1/emails')).body.data.map((e: { id: string }) => e.id)).to.deep.equal([retry.body.id]);
      } finally {
        if (first.child.exitCode === null && first.child.signalCode === null) await first.stop();
        await survivor?.stop();
        await files.stop();
        await world.stop();
        await db?.drop();
      }
    });
  });
}
