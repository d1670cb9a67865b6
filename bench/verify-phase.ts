// Issue 22's figures: how long POST /v1/verify/batch takes for 100 addresses on 100 distinct domains
// that the appliance has not seen (every domain asked of the loopback DNS server: the target is
// ≤ 200 ms), and addresses/s in batches of 100 once those domains are in the appliance's cache.
import { Pool } from 'undici';
import type { DnsWorld } from '../test/helpers/dns-world.js';

const COLD_BATCHES = 10;

export async function verifyPhase(o: { base: string; key: string; world: DnsWorld; seconds: number }) {
  const pool = new Pool(o.base, { connections: 16 });
  const post = async (emails: string[]) => {
    const t0 = performance.now();
    const res = await pool.request({
      path: '/v1/verify/batch',
      method: 'POST',
      headers: { authorization: `Bearer ${o.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ emails }),
    });
    const body = (await res.body.json()) as { data?: Array<{ result: string }> };
    if (res.statusCode !== 200 || body.data?.length !== emails.length)
      throw new Error(`verify batch: ${res.statusCode} ${JSON.stringify(body).slice(0, 200)}`);
    return { ms: performance.now() - t0, results: body.data };
  };
  const batchOf = (round: number) => {
    // three in four domains have MX records; the fourth only an address (MX, then A and AAAA are asked)
    return Array.from({ length: 100 }, (_, i) => {
      const domain = `v${round}-${i}.verify.bench.test`;
      if (i % 4 === 3) o.world.add(domain, 'A', '127.0.0.1');
      else o.world.add(domain, 'MX', { exchange: `mx.${domain}`, priority: 10 });
      return `user${i}@${domain}`;
    });
  };
  // one batch first, unmeasured: the appliance's first request of a route compiles its code paths
  await post(batchOf(-1));
  const cold: number[] = [];
  const batches: string[][] = [];
  for (let round = 0; round < COLD_BATCHES; round++) {
    const emails = batchOf(round);
    batches.push(emails);
    const r = await post(emails);
    if (r.results.some((v) => v.result !== 'valid'))
      throw new Error(`verify batch ${round}: not every address was valid`);
    cold.push(r.ms);
  }
  // warm: the same domains again, 16 clients at once
  let n = 0;
  const end = performance.now() + o.seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 16 }, async (_, c) => {
      for (let i = c; performance.now() < end; i++) {
        await post(batches[i % batches.length]);
        n += 100;
      }
    }),
  );
  const warmSeconds = (performance.now() - t0) / 1000;
  await pool.close();
  const sorted = [...cold].sort((a, b) => a - b);
  return {
    cold_batches: COLD_BATCHES,
    cold_batch_of_100_ms_median: sorted[Math.floor(sorted.length / 2)],
    cold_batch_of_100_ms_max: sorted[sorted.length - 1],
    warm_addresses_per_s: n / warmSeconds,
  };
}
