import { expect } from 'chai';
import { PG_URL } from '../helpers/databases.js';
import { client } from '../helpers/http.js';
import { waitFor } from '../helpers/wait.js';
import { eachClusterWorld } from '../helpers/cluster-world.js';
import { startServe, writeConfig } from '../helpers/process.js';
import { freshPg } from '../helpers/databases.js';

// Several `posthorn serve` processes on one PostgreSQL database (issue 41; docs/operations.md
// "Running several nodes"): nodes that start at once on an empty database all come up (the
// migrations run under an advisory lock), and one Idempotency-Key sent to two nodes at once is an
// ordinary path: one email, both answers naming it, nothing in the logs.
if (PG_URL) {
  describe('several nodes on one PostgreSQL database: starting together, racing on a key @pg', function () {
    this.timeout(120_000);
    const world = eachClusterWorld();

    it('the same Idempotency-Key sent to two nodes at once: both answers name one email, and neither node logs an error', async function () {
      const c = world();
      const a = await c.serve();
      const b = await c.serve();
      const { key, from } = await c.tenant(a.baseUrl);
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
      await waitFor(async () => c.sink.messages.length >= 60, 30_000, 'the 60 emails at the sink');
      await new Promise((r) => setTimeout(r, 1000));
      expect(c.sink.messages).to.have.length(60);
      for (const node of [a, b]) {
        const bad = node
          .output()
          .split('\n')
          .filter((l) => /"level":(40|50|60)/.test(l));
        expect(bad, "warnings and errors in a node's log").to.deep.equal([]);
      }
    });

    it('three nodes started at once on an empty database all come up, five times over', async function () {
      const c = world();
      for (let round = 0; round < 5; round++) {
        const fresh = await freshPg({ empty: true });
        const config = writeConfig({ ...c.base, database: { client: 'pg', url: fresh.options.url } }).path;
        const started = await Promise.allSettled([0, 1, 2].map(() => startServe(config, {}, 30_000)));
        const nodes = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
        try {
          expect(started.filter((r) => r.status === 'rejected').map((r) => String(r.reason))).to.deep.equal([]);
          for (const n of nodes) expect((await fetch(`${n.baseUrl}/healthz`)).status).to.equal(200);
        } finally {
          await Promise.all(nodes.map((p) => p.stop()));
          await fresh.drop();
        }
      }
    });
  });
}
