// The webhooks-pg phase of `npm run bench` (issue 41): webhook events delivered per second, and the
// delay from an event to its delivery, by two `serve` nodes on one PostgreSQL database, against the
// same workload on the single-node SQLite appliance of the same run. The workload: test-key sends
// (two events each: email.sent, email.delivered) spread over the nodes, to one HTTPS endpoint that
// answers in 5–40 ms and answers one first attempt in twenty with a 500 (retried after the
// schedule's second delay, 5 s by default; a retry that failed too would wait the third, 5 minutes).
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import knexModule from 'knex';
import YAML from 'yaml';
import type { HttpsReceiver } from '../test/helpers/https-receiver.js';
import { reach, sendEmails } from './webhook-phase.js';

type Api = (base: string, key: string, method: string, path: string, body?: unknown) => Promise<any>;

export interface WebhooksPgDeps {
  /** the single-node SQLite appliance of the run and its test key */
  sqlite: { base: string; key: string };
  pgUrl: string;
  dir: string;
  hooks: HttpsReceiver;
  api: Api;
  freePort: () => Promise<number>;
  /** starts `posthorn serve` with the config; resolves with its pid and the test key it printed (or `known`) once healthy */
  serve: (
    config: string,
    port: number,
    known?: string,
  ) => Promise<{ pid: number; key: string; stop: () => Promise<void> }>;
  /** settings every node shares (resolvers, receiver CA, limits) */
  settings: Record<string, unknown>;
  step: (what: string) => void;
}

export interface FlakyFigures {
  events: number;
  per_s: number;
  /** the test sends that made the events, per second (what the events could not outrun) */
  sends_per_s: number;
  /** event created_at → first 2xx answer, ms */
  delay_ms: { p50: number; p99: number; max: number };
  failed_answers: number;
}

/** One first attempt in FAIL_EVERY fails; the others answer after 5–40 ms. */
const FAIL_EVERY = 20;
const EMAILS = Number(process.env.BENCH_WEBHOOK_PG_EMAILS ?? 3000);

export async function webhooksPgPhase(d: WebhooksPgDeps): Promise<{
  sqlite_one_node: FlakyFigures;
  pg_two_nodes: FlakyFigures & { database: Record<string, number> };
  pg_vs_sqlite: number;
}> {
  let served = 0;
  d.hooks.setBehaviour('/flaky/', (req, answer) => {
    if (req.headers['service-delivery-attempt'] === '1' && ++served % FAIL_EVERY === 0) return answer(500);
    setTimeout(() => answer(200), 5 + Math.floor(Math.random() * 36));
  });
  d.step(`webhooks-pg: ${EMAILS} test sends, one endpoint failing 1 in ${FAIL_EVERY}, single node on SQLite`);
  const one = await flakyRun(d, [d.sqlite.base], d.sqlite.key, 'sqlite');
  d.step(`  ${JSON.stringify(one)}`);

  const name = `posthorn_bench_${randomBytes(5).toString('hex')}`;
  const admin = knexModule({ client: 'pg', connection: d.pgUrl, pool: { min: 0, max: 1 } });
  await admin.raw(`CREATE DATABASE ${name}`);
  const url = new URL(d.pgUrl);
  url.pathname = `/${name}`;
  const nodes: Array<{ base: string; stop: () => Promise<void> }> = [];
  try {
    let key: string | undefined;
    for (const n of [1, 2]) {
      const port = await d.freePort();
      const config = join(d.dir, `pg-node-${n}.yaml`);
      writeFileSync(
        config,
        YAML.stringify({
          ...d.settings,
          data_dir: `./pg-node-${n}`,
          database: { client: 'pg', url: url.toString() },
          http: { host: '127.0.0.1', port },
          smtp: { inbound: { enabled: false }, submission: { enabled: false } },
        }),
      );
      const node = await d.serve(config, port, key);
      key = node.key;
      nodes.push({ base: `http://127.0.0.1:${port}`, stop: node.stop });
    }
    d.step(`webhooks-pg: the same on two nodes, one PostgreSQL database`);
    const stats = async () =>
      (
        await admin.raw(
          `select xact_commit + xact_rollback as xacts, tup_returned + tup_fetched as read, tup_inserted + tup_updated + tup_deleted as written from pg_stat_database where datname = ?`,
          [name],
        )
      ).rows[0] as { xacts: string; read: string; written: string };
    const before = await stats();
    const two = await flakyRun(
      d,
      nodes.map((n) => n.base),
      key!,
      'pg',
    );
    // the statistics collector reports within half a second
    await new Promise((r) => setTimeout(r, 1000));
    const after = await stats();
    const per = (k: keyof typeof after) => (Number(after[k]) - Number(before[k])) / two.events;
    const database = {
      transactions_per_event: per('xacts'),
      rows_read_per_event: per('read'),
      rows_written_per_event: per('written'),
    };
    if (process.env.BENCH_PG_TABLES) {
      // for a look at what the nodes did to each table (not in the report)
      const bench = knexModule({ client: 'pg', connection: url.toString(), pool: { min: 0, max: 1 } });
      const tables = await bench.raw(
        `select relname, seq_scan, seq_tup_read, idx_scan, n_tup_ins, n_tup_upd, n_tup_del from pg_stat_user_tables order by n_tup_upd + n_tup_ins desc limit 12`,
      );
      await bench.destroy();
      d.step(JSON.stringify(tables.rows));
    }
    d.step(`  ${JSON.stringify({ ...two, database })}`);
    return { sqlite_one_node: one, pg_two_nodes: { ...two, database }, pg_vs_sqlite: two.per_s / one.per_s };
  } finally {
    await Promise.all(nodes.map((n) => n.stop()));
    await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.destroy();
  }
}

/** EMAILS test sends spread over `bases` to one flaky endpoint; resolves once every event was answered 2xx. */
async function flakyRun(d: WebhooksPgDeps, bases: string[], key: string, tag: string): Promise<FlakyFigures> {
  const path = `/flaky/${tag}`;
  const ep = await d.api(bases[0], key, 'POST', '/v1/webhooks', {
    url: d.hooks.url(path),
    events: ['email.sent', 'email.delivered'],
  });
  if (!ep.id) throw new Error(`no webhook endpoint: ${JSON.stringify(ep)}`);
  const firstOk = new Map<string, number>();
  let seen = d.hooks.requests.length;
  let failed = 0;
  const pending: typeof d.hooks.requests = [];
  const tally = (r: (typeof d.hooks.requests)[number]) => {
    if (r.status === null) return false;
    if (r.status >= 300) failed++;
    else {
      const id = r.headers['service-event-id'];
      if (!firstOk.has(id)) firstOk.set(id, r.at - Date.parse(JSON.parse(r.rawBody).created_at));
    }
    return true;
  };
  const count = () => {
    for (let i = pending.length - 1; i >= 0; i--) if (tally(pending[i])) pending.splice(i, 1);
    for (; seen < d.hooks.requests.length; seen++) {
      const r = d.hooks.requests[seen];
      if (r.path === path && !tally(r)) pending.push(r);
    }
    return firstOk.size;
  };
  const t0 = performance.now();
  await sendEmails(bases, key, EMAILS, `${tag}-`);
  const sent = (performance.now() - t0) / 1000;
  const want = 2 * EMAILS;
  await reach(count, want, `webhooks-pg (${tag})`);
  const secs = (performance.now() - t0) / 1000;
  await d.api(bases[0], key, 'DELETE', `/v1/webhooks/${ep.id}`);
  const delays = [...firstOk.values()].sort((a, b) => a - b);
  const at = (p: number) => delays[Math.min(delays.length - 1, Math.floor((p / 100) * delays.length))];
  return {
    events: want,
    per_s: want / secs,
    sends_per_s: EMAILS / sent,
    delay_ms: { p50: at(50), p99: at(99), max: delays[delays.length - 1] },
    failed_answers: failed,
  };
}
