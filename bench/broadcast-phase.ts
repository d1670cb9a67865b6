// Issue 27's figures: a broadcast to 100,000 test contacts (emails the fan-out accepts per second,
// target ≥ 5,000/s) while transactional test-key sends run beside it at 500/s, whose latency from
// the POST to its answer (a test send is `accepted` as it is stored) must stay ≤ 1 s at p99.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';

const CONTACTS = Number(process.env.BENCH_BROADCAST_CONTACTS ?? 100_000);
const TRANSACTIONAL_PER_S = 500;

type Api = (key: string, method: string, path: string, body?: unknown) => Promise<any>;

export async function broadcastPhase(o: {
  base: string;
  dir: string;
  bin: string;
  config: string;
  api: Api;
  cli: (args: string[]) => Promise<any>;
  step: (s: string) => void;
}) {
  const project = await o.cli(['project', 'create', '--name', 'broadcast-bench', '--approved']);
  const key = (await o.cli(['key', 'create', '--project', project.id, '--mode', 'test'])).key as string;
  const audience = (await o.api(key, 'POST', '/v1/audiences', { name: 'everyone' })).id as string;
  const csv = join(o.dir, 'contacts.csv');
  writeFileSync(
    csv,
    ['email,first_name', ...Array.from({ length: CONTACTS }, (_, i) => `reader${i}@example.com,Reader${i}`)].join('\n'),
  );
  o.step(`broadcast: importing ${CONTACTS.toLocaleString('en-US')} contacts`);
  const imported = spawnSync(
    process.execPath,
    [o.bin, 'contacts', 'import', csv, '--project', project.id, '--audience', audience, '--config', o.config, '--json'],
    { encoding: 'utf8' },
  );
  if (imported.status !== 0) throw new Error(`contacts import failed: ${imported.stderr}`);
  const broadcast = await o.api(key, 'POST', '/v1/broadcasts', {
    name: 'bench',
    from: 'News <news@shop.bench.test>',
    subject: 'News for {{contact.first_name | there}}',
    html: '<p>Hello {{contact.first_name | there}},</p><p>Here is what is new.</p><p><a href="{{preferences_url}}">Preferences</a></p>',
    audience_id: audience,
  });

  // transactional sends at a steady 500/s (5 every 10 ms), each timed from its POST to its answer;
  // the first 3 s warm the appliance up and are not counted
  const pool = new Pool(o.base, { connections: 64 });
  const latencies: number[] = [];
  let errors = 0;
  let counting = false;
  let i = 0;
  const inFlight = new Set<Promise<void>>();
  const send = () => {
    const t0 = performance.now();
    const n = i++;
    const p = pool
      .request({
        path: '/v1/emails',
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          from: 'Shop <orders@shop.bench.test>',
          to: [`delivered+${n}@simulator.posthorn.test`],
          subject: `Password reset ${n}`,
          text: 'Your code is 123456.',
        }),
      })
      .then(
        async (res) => {
          await res.body.dump();
          if (res.statusCode !== 202) errors++;
          else if (counting) latencies.push(performance.now() - t0);
        },
        () => void errors++,
      );
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };
  const ticker = setInterval(() => {
    for (let k = 0; k < TRANSACTIONAL_PER_S / 100; k++) send();
  }, 10);
  await new Promise((r) => setTimeout(r, 3000));
  counting = true;
  o.step('broadcast: fan-out with transactional sends at 500/s beside it');
  const t0 = performance.now();
  await o.api(key, 'POST', `/v1/broadcasts/${broadcast.id}/send`, {});
  let done: any;
  for (;;) {
    done = await o.api(key, 'GET', `/v1/broadcasts/${broadcast.id}`);
    if (done.status === 'sent') break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(ticker);
  await Promise.all(inFlight);
  await pool.close();
  latencies.sort((a, b) => a - b);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
  return {
    contacts: CONTACTS,
    fan_out_seconds: seconds,
    fan_out_emails_per_s: done.counts.sent / seconds,
    counts: done.counts,
    transactional: {
      per_s: TRANSACTIONAL_PER_S,
      n: latencies.length,
      errors,
      p50_ms: at(50),
      p99_ms: at(99),
      max_ms: latencies[latencies.length - 1] ?? NaN,
    },
  };
}
