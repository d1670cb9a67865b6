import { expect } from 'chai';
import { PG_URL } from '../helpers/databases.js';
import { client } from '../helpers/http.js';
import { waitEmail } from '../helpers/live.js';
import { waitFor } from '../helpers/wait.js';
import { DEAD_AFTER_S, eachClusterWorld } from '../helpers/cluster-world.js';

// Several `posthorn serve` processes on one PostgreSQL database (issue 41; docs/operations.md
// "Running several nodes"): a node killed while it holds mail and webhook deliveries has them
// released by another within cluster.dead_after, with the outcome the queue's rule gives
// (data not started: sent again; started: ambiguous), and nothing is sent twice.
if (PG_URL) {
  describe('several nodes on one PostgreSQL database: a node that dies or stops @pg', function () {
    this.timeout(120_000);
    const world = eachClusterWorld();

    it('a node killed while it holds mail and a webhook delivery: another releases them within cluster.dead_after + 10 s, and nothing is sent twice', async function () {
      const c = world();
      const a = await c.serve();
      const { t, key, from } = await c.tenant(a.baseUrl);
      // the first POST of the event hangs (the node dies with it open); any later one is answered
      let posts = 0;
      c.hooks.setBehaviour('/held/', (_req, answer) => {
        if (++posts > 1) answer(200);
      });
      const hook = (await t.api.post('/v1/webhooks', { url: c.hooks.url('/held/x'), events: ['email.delivered'] }))
        .body;
      const send = async (to: string) =>
        (await t.api.post('/v1/emails', { from, to: [to], subject: 'cluster', text: 'x' })).body.id as string;
      const before = 'before@tarpit.test'; // connected, no greeting yet: the SMTP transaction has not begun
      const during = 'hold60000-during@slow.test'; // the body went, the answer is held
      const beforeId = await send(before);
      const duringId = await send(during);
      const okId = await send('ok@ok.test');
      await waitFor(async () => c.sink.messagesTo(during).length === 1, 15_000, 'the held body at the sink');
      await waitFor(async () => c.tarpit.connections === 1, 15_000, 'the connection waiting for its greeting');
      const first = await c.hooks.waitFor((r) => r.path === '/held/x', 15_000, 'the first, held webhook POST');
      expect(first.json.data.email_id).to.equal(okId);

      const b = await c.serve();
      const held = (await c.cli(['cluster', 'status', '--json'])).json;
      expect(held.nodes.map((n: { state: string }) => n.state)).to.deep.equal(['alive', 'alive']);
      const holder = held.nodes.find((n: { holds: { queue_rows: number } }) => n.holds.queue_rows > 0);
      expect(holder.holds, JSON.stringify(held.nodes)).to.deep.equal({
        queue_rows: 2,
        data_started: 1,
        webhook_deliveries: 1,
      });
      const deadId = holder.id as string;

      a.child.kill('SIGKILL');
      await a.exited;
      const killedAt = Date.now();
      const api = client(b.baseUrl, key);
      const budget = (DEAD_AFTER_S + 10) * 1000;
      await waitFor(
        async () => c.tarpit.messagesTo(before).length === 1,
        budget,
        'the mail whose body had not started, sent by the other node',
      );
      await waitEmail(api, duringId, (e) => e.status === 'ambiguous', budget - (Date.now() - killedAt));
      const again = await c.hooks.waitFor(
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
      expect(c.tarpit.messagesTo(before)).to.have.length(1);
      expect(c.sink.messagesTo(during)).to.have.length(1);
      expect(c.sink.messagesTo('ok@ok.test')).to.have.length(1);
      const after = (await c.cli(['cluster', 'status', '--json'])).json;
      expect(after.nodes.map((n: { id: string; state: string }) => [n.id === deadId, n.state])).to.deep.equal([
        [false, 'alive'],
      ]);
    });

    it('a node stopped with SIGTERM releases what it still holds at once: its webhook delivery goes out from the other node well before cluster.dead_after', async function () {
      const c = world();
      const a = await c.serve();
      const { t, from } = await c.tenant(a.baseUrl);
      let posts = 0;
      c.hooks.setBehaviour('/held/', (_req, answer) => {
        if (++posts > 1) answer(200);
      });
      await t.api.post('/v1/webhooks', { url: c.hooks.url('/held/term'), events: ['email.delivered'] });
      await t.api.post('/v1/emails', { from, to: ['term@ok.test'], subject: 'x', text: 'y' });
      const first = await c.hooks.waitFor((r) => r.path === '/held/term', 15_000, 'the first, held POST');
      await c.serve();
      const stoppedAt = Date.now();
      expect(await a.stop('SIGTERM')).to.equal(0);
      const again = await c.hooks.waitFor((r) => r.path === '/held/term' && r !== first, 10_000, 'the POST again');
      expect(again.json.id).to.equal(first.json.id);
      expect(Date.now() - stoppedAt).to.be.below(DEAD_AFTER_S * 1000);
      expect((await c.cli(['cluster', 'status', '--json'])).json.nodes).to.have.length(1);
    });

    it('posthorn cluster release frees a dead node at once, and says when it knows no such node', async function () {
      const c = world();
      const a = await c.serve();
      const { t, from } = await c.tenant(a.baseUrl);
      await t.api.post('/v1/emails', { from, to: ['released@tarpit.test'], subject: 'x', text: 'y' });
      await waitFor(async () => c.tarpit.connections === 1, 15_000, 'the connection waiting for its greeting');
      const node = (await c.cli(['cluster', 'status', '--json'])).json.nodes[0];
      expect(node).to.include({ state: 'alive' });
      a.child.kill('SIGKILL');
      await a.exited;
      const released = await c.cli(['cluster', 'release', node.id, '--json']);
      expect(released.code).to.equal(0);
      expect(released.json).to.deep.equal({ node: node.id, released: { queue_rows: 1, webhook_deliveries: 0 } });
      // the next node to start recovers the row at once: its body had not started, so it is sent
      await c.serve();
      await waitFor(async () => c.tarpit.messagesTo('released@tarpit.test').length === 1, 10_000, 'the mail sent');
      const unknown = await c.cli(['cluster', 'release', 'node_nope', '--json']);
      expect(unknown.code).to.not.equal(0);
      expect(unknown.stderr).to.match(/node node_nope/);
    });
  });
}
