import { expect } from 'chai';
import type Database from 'better-sqlite3';
import { sqliteConnectionOf } from '../../src/store/sqlite.js';
import type { Knex } from 'knex';
import { startLiveWorld, verifiedDomain, waitEmail, type LiveWorld } from '../helpers/live.js';
import { startReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';
import type { Tenant } from '../helpers/api.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Tables that stay small whatever the mail: a project's keys, domains, endpoints and the MTA's
 * own configuration. Reading one whole is fine; every other table grows with the mail (emails,
 * their recipients, queue rows, events, webhook deliveries, logs, suppressions, contacts …), and
 * a statement that reads one of those whole would slow every send as the database grows.
 */
const SMALL_TABLES = new Set([
  'projects',
  'api_keys',
  'domains',
  'domain_keys',
  'webhook_endpoints',
  'templates',
  'template_versions',
  'topics',
  'audiences',
  'segments',
  'forms',
  'mta_ips',
  'mta_lanes',
  'mta_routes',
  'mta_sts_policies',
  'nodes',
  'meta',
  'knex_migrations',
  'knex_migrations_lock',
]);

interface Seen {
  sql: string;
  /** the plan's lines that read a growing table whole */
  scans: string[];
}

/** Records every statement prepared on a connection (each call: the connection caches the statement itself). */
function recordStatements(conn: Database.Database, into: Set<string>): () => void {
  const own = Object.getOwnPropertyDescriptor(conn, 'prepare');
  const prepare = conn.prepare.bind(conn);
  conn.prepare = (sql: string) => {
    into.add(sql);
    return prepare(sql);
  };
  return () => {
    if (own) Object.defineProperty(conn, 'prepare', own);
  };
}

/**
 * The lines of a statement's plan (`EXPLAIN QUERY PLAN`, its parameters bound to NULL: the plan does
 * not depend on them) that read a growing table whole: "SCAN t", or "SCAN t USING [COVERING] INDEX i"
 * (the whole index, which grows with t) unless i is partial (`CREATE INDEX … WHERE`: it holds only
 * the rows waiting for something, such as events not yet fanned out). A VALUES list or a CTE is not a table.
 */
function fullScans(conn: Database.Database, schema: Schema, sql: string): string[] {
  if (!/^\s*(with|select|insert|update|delete)\b/i.test(sql)) return [];
  const plan = conn.prepare(`explain query plan ${sql}`).all(...(sql.match(/\?/g) ?? []).map(() => null)) as Array<{
    detail: string;
  }>;
  return plan
    .map((p) => p.detail)
    .filter((d) => {
      const m = /^SCAN (\w+)(?: USING (?:COVERING )?INDEX (\w+))?/.exec(d);
      return m !== null && schema.tables.has(m[1]) && !SMALL_TABLES.has(m[1]) && !(m[2] && schema.partial.has(m[2]));
    });
}

/** The database's tables, and its partial indexes. */
interface Schema {
  tables: Set<string>;
  partial: Set<string>;
}

function schemaOf(conn: Database.Database): Schema {
  const names = (sql: string) => new Set((conn.prepare(sql).all() as Array<{ name: string }>).map((r) => r.name));
  return {
    tables: names("select name from sqlite_master where type = 'table'"),
    partial: names("select name from sqlite_master where type = 'index' and sql like '% where %'"),
  };
}

/**
 * The guardrail of issue 45's "a million stored emails": every statement the accept, the queue's
 * claim and record, and the webhook dispatch run on a live appliance, with its plan from SQLite
 * itself. None may read a growing table whole, or the accept and the delivery would slow down as
 * the mail piles up (the bench measures it: `BENCH_PRELOAD=1000000`).
 */
describe('query plans of the hot paths (SQLite)', function () {
  this.timeout(60_000);
  let live: LiveWorld;
  let hooks: HttpsReceiver;
  let t: Tenant;
  const writerSql = new Set<string>();
  const readerSql = new Set<string>();
  let stop: Array<() => void> = [];
  let writer: Database.Database;
  let reader: Database.Database | null;

  before(async function () {
    hooks = await startReceiver();
    live = await startLiveWorld(
      'dkim.plans.test',
      'mta.plans.test',
      {
        network: { allow_private: true },
        webhooks: { ca_file: hooks.caFile },
        outbound: { retry_schedule: ['1s', '1s'] },
      },
      { webhooks: true },
    );
    live.world.add('hooks.test', 'A', '127.0.0.1');
    t = await live.api.tenant({ mode: 'live' });
    const store = live.api.deps.store;
    writer = (await store.knex.transaction(async (trx: Knex.Transaction) => sqliteConnectionOf(trx)))!;
    reader = sqliteConnectionOf(store.reader);
    expect(writer, 'the writer connection').to.not.equal(null);
    stop = [recordStatements(writer, writerSql), ...(reader ? [recordStatements(reader, readerSql)] : [])];
  });
  after(async function () {
    for (const s of stop) s();
    await live?.stop();
    await hooks?.stop();
  });

  it('reads no growing table whole while it accepts, delivers, defers, bounces and posts webhooks', async function () {
    const domain = await verifiedDomain(t, live.world);
    const hook = await t.api.post('/v1/webhooks', {
      url: hooks.url('/plans'),
      events: ['email.sent', 'email.delivered', 'email.bounced', 'email.delivery_delayed'],
    });
    expect(hook.status, hook.text).to.equal(201);
    const from = `Shop <orders@${domain.domain}>`;
    const sends = [
      t.api.post('/v1/emails', { from, to: ['a@ok.test'], subject: 'one', text: 'x', tags: { k: 'v' } }),
      t.api.post('/v1/emails', { from, to: ['b@ok.test', 'c@ok2.test'], subject: 'two', html: '<p>x</p>' }),
      t.api.post('/v1/emails', { from, to: ['d@reject.test'], subject: 'three', text: 'x' }),
      t.api.post('/v1/emails', { from, to: ['e@tempfail.test'], subject: 'four', text: 'x' }),
      t.api.post('/v1/emails/batch', [
        { from, to: ['f@ok.test'], subject: 'five', text: 'x' },
        { from, to: ['g@ok.test'], subject: 'six', text: 'x' },
      ]),
    ];
    const ids: string[] = [];
    for (const res of await Promise.all(sends)) {
      expect(res.status, res.text).to.equal(202);
      ids.push(...(Array.isArray(res.body.data) ? res.body.data.map((e: { id: string }) => e.id) : [res.body.id]));
    }
    // delivered, bounced and deferred: every path of the record
    await waitEmail(t.api, ids[0], (e) => e.recipients[0].status === 'delivered');
    await waitEmail(t.api, ids[2], (e) => e.recipients[0].status === 'bounced');
    await waitEmail(t.api, ids[3], (e) => e.recipients[0].status === 'deferred');
    for (const id of [ids[1], ids[4], ids[5]])
      await waitEmail(t.api, id, (e) => e.recipients.every((r: { status: string }) => r.status === 'delivered'));
    // the endpoint heard of them: the dispatch's fan-out, claim and record ran
    await waitFor(
      async () => hooks.received.filter((r) => r.path === '/plans').length >= 8,
      15_000,
      'eight events at the endpoint',
    );
    // the idempotent path of the accept too
    const key = { 'Idempotency-Key': 'plans-1' };
    for (let i = 0; i < 2; i++)
      expect(
        (await t.api.post('/v1/emails', { from, to: ['h@ok.test'], subject: 'k', text: 'x' }, key)).status,
      ).to.equal(202);

    // the recording ends before the plans are asked for: those statements are the test's own
    for (const s of stop.splice(0)) s();
    const schema = schemaOf(writer);
    const seen: Seen[] = [];
    for (const [conn, statements] of [
      [writer, writerSql],
      [reader, readerSql],
    ] as const) {
      if (!conn) continue;
      for (const sql of statements) seen.push({ sql, scans: fullScans(conn, schema, sql) });
    }
    // the recording saw the paths it is meant to check
    const all = seen.map((s) => s.sql).join('\n');
    for (const table of ['emails', 'email_recipients', 'outbound_queue', 'events', 'webhook_deliveries'])
      expect(all, table).to.match(new RegExp(`(insert into|update) ["\`]${table}["\`]`));
    const bad = seen.filter((s) => s.scans.length);
    expect(bad.map((b) => `${b.scans.join('; ')}\n    ${b.sql}`).join('\n')).to.equal('');
  });
});
