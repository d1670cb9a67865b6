import type { Knex } from 'knex';
import type { Clock } from '../../../lib/time.js';
import type { Store } from '../../../store/store.js';
import { candidatesOf, doomedEmails, doomedEvents } from './retention-rules.js';
import {
  deleteDoomed,
  deleteInbound,
  deliveriesOfEvents,
  emailsAfter,
  eventsOfNoEmailBefore,
  holdsOf,
  inboundMadeBefore,
  noneDeleted,
  START,
  type Deleted,
  type Position,
} from './retention.repo.js';

export const DAY_MS = 86_400_000;

/**
 * Emails looked at per transaction. A batch deletes them with their
 * recipients, events and webhook deliveries (about five rows each, every one
 * in two to four b-trees, some at random places: a recipient's address). On
 * a million stored emails (SQLite), 50 took 2.3 ms a batch at the median and
 * 11 ms at the 99th percentile; 100 took 4 to 6 ms and up to 50 ms, for
 * hardly more emails a second: the accepts wait for the one writer meanwhile.
 */
export const PRUNE_BATCH = 50;
/** inbound emails hold their raw message: fewer per transaction */
const INBOUND_BATCH = 50;
/** events of no email are one row each (and their deliveries) */
const EVENT_BATCH = 1000;

export interface RetentionDeps {
  store: Store;
  clock: Clock;
}

export interface RetentionSettings {
  /** retention.days; 0 keeps everything */
  days: number;
  /** emails per transaction (PRUNE_BATCH unless set) */
  batch?: number;
}

export interface PruneReport {
  deleted: Deleted;
  /** rows deleted in all tables */
  rows: number;
}

/** One batch in its transaction: what it deleted, and where the next one starts (null: the walk is over). */
type Step<At> = (trx: Knex.Transaction, after: At) => Promise<{ next: At | null; deleted: Deleted }>;

/**
 * The retention job (retention.days): deletes emails that nothing can change
 * any more (retention-rules.ts), made and last changed before the cutoff,
 * with every row that belongs to them; events of no email (email.received)
 * and inbound emails as old. Suppressions are never deleted. Each batch is a
 * short transaction of its own, with a pause between two (walk), so the
 * accepts (same writer, same thread in `serve`) go on meanwhile.
 */
export function retentionService(deps: RetentionDeps, settings: RetentionSettings) {
  return {
    async prune(): Promise<PruneReport> {
      const deleted = noneDeleted();
      if (settings.days > 0) {
        const cutoff = deps.clock.now() - settings.days * DAY_MS;
        const batch = settings.batch ?? PRUNE_BATCH;
        await walk(deps, deleted, '', (trx, after) => pruneEmails(trx, after, cutoff, batch));
        await walk(deps, deleted, START, (trx, after) => pruneEventsOfNoEmail(trx, after, cutoff, EVENT_BATCH));
        await walk(deps, deleted, START, (trx, after) =>
          pruneInbound(trx, after, cutoff, Math.min(batch, INBOUND_BATCH)),
        );
      }
      return { deleted, rows: Object.values(deleted).reduce((a, b) => a + b, 0) };
    },
  };
}

export type RetentionService = ReturnType<typeof retentionService>;

/**
 * Batch after batch until one comes back short; counted once committed (a
 * transaction retried runs again). After each batch the job waits as long
 * as the batch took: the writer is the job's half the time at most, and
 * the WAL it writes (random index pages, 200 MB/s unpaced) grows half as
 * fast. Unpaced, test-key accepts on a million stored emails fell to about
 * 0.65 of their rate while it ran, p99 55 ms; paced, to about 0.75, p99 30
 * to 43 ms (docs/benchmark.md).
 */
async function walk<At>(deps: RetentionDeps, into: Deleted, start: At, step: Step<At>): Promise<void> {
  let after = start;
  for (;;) {
    const started = performance.now();
    const { next, deleted } = await deps.store.tx((trx) => step(trx, after));
    for (const [table, n] of Object.entries(deleted)) into[table as keyof Deleted] += n;
    if (next === null) return;
    after = next;
    await new Promise<void>((resolve) => setTimeout(resolve, Math.max(1, performance.now() - started)));
  }
}

/** What the job's log line says. */
export function describePrune(r: PruneReport): string {
  const d = r.deleted;
  return `${d.emails} email(s), ${d.events} event(s), ${d.webhook_deliveries} webhook delivery(ies), ${d.inbound_emails} inbound email(s) pruned (${r.rows} rows in all)`;
}

/** Where the next batch starts: after the last row of this one, unless this one came back short. */
const nextAfter = (page: Array<{ id: string; at: number }>, limit: number): Position | null =>
  page.length < limit ? null : { at: page[page.length - 1].at, id: page[page.length - 1].id };

async function pruneEmails(
  trx: Knex.Transaction,
  after: string,
  cutoff: number,
  limit: number,
): Promise<{ next: string | null; deleted: Deleted }> {
  const page = await emailsAfter(trx, after, limit);
  const { candidates, done } = candidatesOf(page, cutoff);
  const deleted = noneDeleted();
  if (candidates.length)
    await deleteDoomed(trx, doomedEmails(candidates, await holdsOf(trx, candidates), cutoff), deleted);
  return { next: done || page.length < limit ? null : page[page.length - 1].id, deleted };
}

async function pruneEventsOfNoEmail(
  trx: Knex.Transaction,
  after: Position,
  cutoff: number,
  limit: number,
): Promise<{ next: Position | null; deleted: Deleted }> {
  const page = await eventsOfNoEmailBefore(trx, after, cutoff, limit);
  const deleted = noneDeleted();
  if (page.length)
    await deleteDoomed(
      trx,
      doomedEvents(
        page,
        await deliveriesOfEvents(
          trx,
          page.map((e) => e.id),
        ),
        cutoff,
      ),
      deleted,
    );
  return {
    next: nextAfter(
      page.map((e) => ({ id: e.id, at: e.createdAt })),
      limit,
    ),
    deleted,
  };
}

async function pruneInbound(
  trx: Knex.Transaction,
  after: Position,
  cutoff: number,
  limit: number,
): Promise<{ next: Position | null; deleted: Deleted }> {
  const page = await inboundMadeBefore(trx, after, cutoff, limit);
  const deleted = noneDeleted();
  await deleteInbound(
    trx,
    page.map((m) => m.id),
    deleted,
  );
  return {
    next: nextAfter(
      page.map((m) => ({ id: m.id, at: m.createdAt })),
      limit,
    ),
    deleted,
  };
}
