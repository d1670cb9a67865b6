// The accept-pruning phase of `npm run bench` (with BENCH_PRELOAD): test-key accepts/s while the
// appliance's own retention job (modules/operations/retention) prunes the preloaded emails older than
// retention.days. The appliance is started again with `retention: {days: 30, schedule: every
// second}` (until then it ran with days 0: nothing pruned while the other accept phases measured),
// warmed up while the job starts, measured, and then left to finish, for the pruning rate alone.
// Rows pruned are counted in the appliance's database (read-only): those whose id was made
// before the cutoff, in the tables the preload fills.
import Database from 'better-sqlite3';
import { firstIdAt, type IdKind } from '../src/lib/ids.js';

const DAY = 86_400_000;
const TABLES: Array<[string, IdKind]> = [
  ['emails', 'email'],
  ['email_recipients', 'recipient'],
  ['outbound_queue', 'queueRow'],
  ['events', 'event'],
];

export interface PruningPhaseDeps {
  dbFile: string;
  /** stops the appliance and starts it again with this `retention` config */
  restart(retention: { days: number; schedule: string }): Promise<void>;
  /** test-key accepts for `secs` seconds (the accept phases' load), measured as they are */
  accept(secs: number, measure: boolean): Promise<{ rate: number; wall?: number } & Record<string, unknown>>;
  warmupSeconds: number;
  seconds: number;
  step(what: string): void;
}

/** Rows made before the cutoff that are still stored, in the tables the preload fills. */
function oldRows(dbFile: string, cutoff: number): number {
  const db = new Database(dbFile, { readonly: true });
  try {
    return TABLES.reduce(
      (n, [table, kind]) =>
        n +
        (db.prepare(`select count(*) as n from ${table} where id < ?`).get(firstIdAt(kind, cutoff)) as { n: number }).n,
      0,
    );
  } finally {
    db.close();
  }
}

export async function pruningPhase(d: PruningPhaseDeps) {
  // the preload leaves a gap of two days around the cutoff: the job's and this count agree
  const cutoff = Date.now() - 30 * DAY;
  const atStart = oldRows(d.dbFile, cutoff);
  d.step(
    `accepts while the retention job prunes (${atStart} rows made before the cutoff); the appliance restarted with the job every second`,
  );
  const restarted = performance.now();
  await d.restart({ days: 30, schedule: '* * * * * *' });
  if (d.warmupSeconds > 0) await d.accept(d.warmupSeconds, false);
  const before = oldRows(d.dbFile, cutoff);
  const t0 = performance.now();
  const accepts = await d.accept(d.seconds, true);
  const window = (performance.now() - t0) / 1000;
  const after = oldRows(d.dbFile, cutoff);
  d.step(`  ${JSON.stringify({ ...accepts, pruned_rows_per_s: Math.round((before - after) / window) })}`);
  // then the job alone, until it has nothing left to prune (what stays: the ambiguous emails)
  let left = after;
  let still = 0;
  while (still < 3) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = oldRows(d.dbFile, cutoff);
    still = now === left ? still + 1 : 0;
    left = now;
  }
  const seconds = (performance.now() - restarted) / 1000 - still;
  return {
    accepts: {
      ...accepts,
      pruned_rows: before - after,
      pruned_rows_per_s: Math.round((before - after) / window),
      rows_left_to_prune_after: after - left,
    },
    pruning: { rows: atStart - left, rows_kept: left, seconds, rows_per_s: Math.round((atStart - left) / seconds) },
  };
}
