import { expect } from 'chai';
import { startServe, writeConfig, runCli, type ServeProcess } from '../helpers/process.js';
import { client } from '../helpers/http.js';
import { PG_URL, freshPg, type TestDatabase } from '../helpers/databases.js';
import { startDnsWorld, type DnsWorld } from '../helpers/dns-world.js';
import { startSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { routeSinkDomains, verifiedDomain, waitEmail } from '../helpers/live.js';
import { startReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';
import { waitFor } from '../helpers/wait.js';
import type { Tenant } from '../helpers/api.js';

// Several `posthorn serve` processes on one PostgreSQL database (issue 41; docs/operations.md
// "Running several nodes"): a node killed while it holds mail and webhook deliveries has them
// released by another within cluster.dead_after, with the outcome the queue's rule gives
// (data not started: sent again; started: ambiguous), and nothing is sent twice.

const DEAD_AFTER_S = 5;

if (PG_URL) {
  describe('several nodes on one PostgreSQL database @pg', function () {
    this.timeout(120_000);
    let db: TestDatabase;
    let world: DnsWorld;
    let sink: SmtpSink;
    let hooks: HttpsReceiver;
    /** the MX of tarpit.test: its first connection waits for a greeting (no SMTP transaction begun) */
    let tarpit: SmtpSink;
    let base: Record<string, unknown>;
    const running: ServeProcess[] = [];

    const serve = async () => {
      const p = await startServe(writeConfig(base).path);
      running.push(p);
      return p;
    };
    const cli = (args: string[]) => runCli([...args, '--config', writeConfig(base).path]);

    beforeEach(async function () {
      db = await freshPg();
      world = await startDnsWorld();
      sink = await startSink();
      hooks = await startReceiver();
      tarpit = await startSink({ host: '127.0.0.2', port: sink.port, holdFirstGreetingMs: 60_000 });
      routeSinkDomains(world);
      world.add('tarpit.test', 'MX', { exchange: 'mx.tarpit.test', priority: 10 });
      world.add('mx.tarpit.test', 'A', '127.0.0.2');
      world.add('hooks.test', 'A', '127.0.0.1');
      base = {
        database: { client: 'pg', url: db.options.url },
        cluster: { dead_after: `${DEAD_AFTER_S}s` },
        outbound: { hostname: 'mta.cluster.test', mx_port: sink.port },
        dns: { resolvers: [world.address], zone: 'dkim.cluster.test' },
        smtp: { inbound: { enabled: false }, submission: { enabled: false } },
        network: { allow_private: true },
        webhooks: { ca_file: hooks.caFile },
        limits: { requests_per_second: 100_000 },
      };
    });
    afterEach(async function () {
      // a failure shows what the nodes warned of
      if (this.currentTest?.state === 'failed')
        for (const p of running)
          console.log(
            p
              .output()
              .split('\n')
              .filter((l) => /"level":[456]0/.test(l))
              .join('\n'),
          );
      await Promise.all(running.splice(0).map((p) => p.stop('SIGKILL')));
      await hooks.stop();
      await tarpit.stop();
      await sink.stop();
      await world.stop();
      await db.drop();
    });

    async function tenant(baseUrl: string): Promise<{ t: Tenant; key: string; from: string }> {
      const project = (await cli(['project', 'create', '--name', 'cluster', '--approved', '--json'])).json;
      const key = (await cli(['key', 'create', '--project', project.id, '--mode', 'live', '--json'])).json
        .key as string;
      const t = { api: client(baseUrl, key) } as Tenant;
      const d = await verifiedDomain(t, world);
      return { t, key, from: `a@${d.domain}` };
    }

    it('a node killed while it holds mail and a webhook delivery: another releases them within cluster.dead_after + 10 s, and nothing is sent twice', async function () {
      const a = await serve();
      const { t, key, from } = await tenant(a.baseUrl);
      // the first POST of the event hangs (the node dies with it open); any later one is answered
      let posts = 0;
      hooks.setBehaviour('/held/', (_req, answer) => {
        if (++posts > 1) answer(200);
      });
      const hook = (await t.api.post('/v1/webhooks', { url: hooks.url('/held/x'), events: ['email.delivered'] })).body;
      const send = async (to: string) =>
        (await t.api.post('/v1/emails', { from, to: [to], subject: 'cluster', text: 'x' })).body.id as string;
      const before = 'before@tarpit.test'; // connected, no greeting yet: the SMTP transaction has not begun
      const during = 'hold60000-during@slow.test'; // the body went, the answer is held
      const beforeId = await send(before);
      const duringId = await send(during);
      const okId = await send('ok@ok.test');
      await waitFor(async () => sink.messagesTo(during).length === 1, 15_000, 'the held body at the sink');
      await waitFor(async () => tarpit.connections === 1, 15_000, 'the connection waiting for its greeting');
      const first = await hooks.waitFor((r) => r.path === '/held/x', 15_000, 'the first, held webhook POST');
      expect(first.json.data.email_id).to.equal(okId);

      const b = await serve();
      const held = (await cli(['cluster', 'status', '--json'])).json;
      expect(held.nodes.map((n: { state: string }) => n.state)).to.deep.equal(['alive', 'alive']);
      const holder = held.nodes.find((n: { holds: { queue_rows: number } }) => n.holds.queue_rows > 0);
      expect(holder.holds).to.deep.equal({ queue_rows: 2, data_started: 1, webhook_deliveries: 1 });
      const deadId = holder.id as string;

      a.child.kill('SIGKILL');
      await a.exited;
      const killedAt = Date.now();
      const api = client(b.baseUrl, key);
      const budget = (DEAD_AFTER_S + 10) * 1000;
      await waitFor(
        async () => tarpit.messagesTo(before).length === 1,
        budget,
        'the mail whose body had not started, sent by the other node',
      );
      await waitEmail(api, duringId, (e) => e.status === 'ambiguous', budget - (Date.now() - killedAt));
      const again = await hooks.waitFor(
        (r) => r.path === '/held/x' && r !== first,
        budget - (Date.now() - killedAt),
        'the webhook event posted again by the other node',
      );
      expect(Date.now() - killedAt).to.be.below(budget);
      expect(again.json.id).to.equal(first.json.id);
      await waitFor(
        async () => (await api.get(`/v1/webhooks/${hook.id}/deliveries`)).body.data[0]?.status === 'succeeded',
        5_000,
        'the delivery recorded as succeeded',
      );
      expect((await api.get(`/v1/emails/${beforeId}`)).body.recipients[0].status).to.equal('delivered');

      // nothing twice: a second's grace for anything late
      await new Promise((r) => setTimeout(r, 1500));
      expect(tarpit.messagesTo(before)).to.have.length(1);
      expect(sink.messagesTo(during)).to.have.length(1);
      expect(sink.messagesTo('ok@ok.test')).to.have.length(1);
      const after = (await cli(['cluster', 'status', '--json'])).json;
      expect(after.nodes.map((n: { id: string; state: string }) => [n.id === deadId, n.state])).to.deep.equal([
        [false, 'alive'],
      ]);
    });

    it('a node stopped with SIGTERM releases what it still holds at once: its webhook delivery goes out from the other node well before cluster.dead_after', async function () {
      const a = await serve();
      const { t, from } = await tenant(a.baseUrl);
      let posts = 0;
      hooks.setBehaviour('/held/', (_req, answer) => {
        if (++posts > 1) answer(200);
      });
      await t.api.post('/v1/webhooks', { url: hooks.url('/held/term'), events: ['email.delivered'] });
      await t.api.post('/v1/emails', { from, to: ['term@ok.test'], subject: 'x', text: 'y' });
      const first = await hooks.waitFor((r) => r.path === '/held/term', 15_000, 'the first, held POST');
      await serve();
      const stoppedAt = Date.now();
      expect(await a.stop('SIGTERM')).to.equal(0);
      const again = await hooks.waitFor((r) => r.path === '/held/term' && r !== first, 10_000, 'the POST again');
      expect(again.json.id).to.equal(first.json.id);
      expect(Date.now() - stoppedAt).to.be.below(DEAD_AFTER_S * 1000);
      expect((await cli(['cluster', 'status', '--json'])).json.nodes).to.have.length(1);
    });

    it('posthorn cluster release frees a dead node at once, and says when it knows no such node', async function () {
      const a = await serve();
      const { t, from } = await tenant(a.baseUrl);
      await t.api.post('/v1/emails', { from, to: ['released@tarpit.test'], subject: 'x', text: 'y' });
      await waitFor(async () => tarpit.connections === 1, 15_000, 'the connection waiting for its greeting');
      const node = (await cli(['cluster', 'status', '--json'])).json.nodes[0];
      expect(node).to.include({ state: 'alive' });
      a.child.kill('SIGKILL');
      await a.exited;
      const released = await cli(['cluster', 'release', node.id, '--json']);
      expect(released.code).to.equal(0);
      expect(released.json).to.deep.equal({ node: node.id, released: { queue_rows: 1, webhook_deliveries: 0 } });
      // the next node to start recovers the row at once: its body had not started, so it is sent
      await serve();
      await waitFor(async () => tarpit.messagesTo('released@tarpit.test').length === 1, 10_000, 'the mail sent');
      const unknown = await cli(['cluster', 'release', 'node_nope', '--json']);
      expect(unknown.code).to.not.equal(0);
      expect(unknown.stderr).to.match(/node node_nope/);
    });

    it('the same Idempotency-Key sent to two nodes at once: both answers name one email, and neither node logs an error', async function () {
      const a = await serve();
      const b = await serve();
      const { key, from } = await tenant(a.baseUrl);
      const apis = [client(a.baseUrl, key), client(b.baseUrl, key)];
      const pairs = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          Promise.all(
            apis.map((api) =>
              api.post(
                '/v1/emails',
                { from, to: [`race${i}@ok.test`], subject: 'race', text: 'x' },
                { 'idempotency-key': `race-${i}` },
              ),
            ),
          ),
        ),
      );
      for (const [x, y] of pairs) {
        expect([x.status, y.status]).to.deep.equal([202, 202]);
        expect(y.body.id).to.equal(x.body.id);
      }
      await waitFor(async () => sink.messages.length >= 60, 30_000, 'the 60 emails at the sink');
      await new Promise((r) => setTimeout(r, 1000));
      expect(sink.messages).to.have.length(60);
      for (const node of [a, b]) {
        const bad = node
          .output()
          .split('\n')
          .filter((l) => /"level":(40|50|60)/.test(l));
        expect(bad, "warnings and errors in a node's log").to.deep.equal([]);
      }
    });

    it('three nodes started at once on an empty database all come up, five times over', async function () {
      for (let round = 0; round < 5; round++) {
        const fresh = await freshPg();
        const config = writeConfig({ ...base, database: { client: 'pg', url: fresh.options.url } }).path;
        try {
          const nodes = await Promise.all([0, 1, 2].map(() => startServe(config, {}, 30_000)));
          running.push(...nodes);
          for (const n of nodes) expect((await fetch(`${n.baseUrl}/healthz`)).status).to.equal(200);
          await Promise.all(running.splice(0).map((p) => p.stop()));
        } finally {
          await fresh.drop();
        }
      }
    });
  });
}
