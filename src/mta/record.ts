import type { Knex } from 'knex';
import type { Logger } from '../log/logger.js';
import type { Email } from '../modules/sending/emails/email.js';
import {
  ambiguousAfterCrash,
  applyOutcomes,
  keepsQueueRow,
  requeueOrphan,
  type RecipientOutcome,
} from '../modules/sending/emails/lifecycle.js';
import { orphanedRows, queueRowsOfEmails, type QueueRow } from '../modules/sending/emails/queue.repo.js';
import { lockEmails, storeChanges, type EmailChange } from '../modules/sending/emails/store-change.js';
import type { AttemptResult } from './attempt.js';

/** An attempt that ended: its row, the outcome of each recipient (the attempt's and the screen's), and the attempt's result. */
export interface Completed {
  row: QueueRow;
  outcomes: Map<string, RecipientOutcome>;
  result: AttemptResult;
}

export interface RecordContext {
  now: number;
  /** only the holder of the lease records; null for rows nobody holds (recovery) */
  owner: string | null;
  retryDelaysMs: (email: Email) => readonly number[];
  logger: Logger;
}

/**
 * Applies attempts' outcomes through the state machine and writes them with
 * their events, reading the emails again inside the transaction that writes
 * them (`read`: the emails as this transaction already read them). Several
 * queue rows of one email may finish together: each sees the state the
 * previous one left.
 */
export async function recordOutcomes(
  trx: Knex.Transaction,
  items: Completed[],
  ctx: RecordContext,
  read?: Map<string, Email>,
): Promise<void> {
  const ids = [...new Set(items.map((i) => i.row.emailId))];
  // Other processes may be recording other queue rows of the same emails (PostgreSQL); an attempt
  // writes only the row it holds by lease.
  const emails = await lockEmails(trx, ids, { queueRows: false, ...(read ? { known: read } : {}) });
  const rows = new Map((await queueRowsOfEmails(trx, ids)).map((q) => [q.id, q]));
  const changes: EmailChange[] = [];
  for (const { row, outcomes, result } of items) {
    const email = emails.get(row.emailId);
    if (!email) continue;
    const stored = rows.get(row.id);
    // A row taken over after its lease ran out belongs to the taker.
    if (ctx.owner !== null && (stored?.state !== 'submitting' || stored.leaseOwner !== ctx.owner)) {
      ctx.logger.warn(
        { row: row.id, email: email.id },
        'an attempt finished after its lease was taken over; its outcome is not recorded',
      );
      continue;
    }
    const change = applyOutcomes(email, row, outcomes, {
      now: ctx.now,
      retryDelaysMs: ctx.retryDelaysMs(email),
      otherRows: [...rows.values()].filter((x) => x.emailId === email.id && x.id !== row.id),
      providerMessageId: result.providerMessageId ?? null,
      ...(result.failureReason ? { failureReason: result.failureReason } : {}),
      ...(result.heldUntil !== undefined ? { heldUntil: result.heldUntil } : {}),
    });
    emails.set(email.id, change.email);
    rows.set(row.id, change.row);
    const kept = keepsQueueRow(change.email, change.row);
    changes.push({
      email: change.email,
      emailMoved: true,
      recipients: change.recipients.filter((r) => outcomes.has(r.id)),
      rows: kept ? [change.row] : [],
      dropRows: kept ? [] : [row.id],
      events: change.events,
      suppress: change.suppress,
    });
  }
  await storeChanges(trx, changes, ctx.now);
}

/**
 * Rows left `submitting` by a process that died. If the store shows the
 * message body never started, the row simply goes back to the queue; if it
 * may have, its recipients become `ambiguous` and are never sent again
 * without an operator (`posthorn queue retry`). `all`: every such row (SQLite
 * at start: one process owns the queue); else rows whose lease ran out.
 */
export async function recoverOrphans(
  trx: Knex.Transaction,
  all: boolean,
  ctx: Omit<RecordContext, 'owner'>,
): Promise<number> {
  const orphans = await orphanedRows(trx, ctx.now, all);
  const ids = [...new Set(orphans.map((q) => q.emailId))];
  // the orphans' rows are this transaction's already (SKIP LOCKED), as a claim's are
  const emails = await lockEmails(trx, ids, { queueRows: false });
  const rows = new Map((await queueRowsOfEmails(trx, ids)).map((q) => [q.id, q]));
  const requeued: EmailChange[] = [];
  for (const q of orphans) {
    const email = emails.get(q.emailId);
    if (!email || q.dataStarted) continue;
    const back = requeueOrphan(
      email,
      q,
      [...rows.values()].filter((x) => x.emailId === email.id && x.id !== q.id),
      ctx.now,
    );
    emails.set(email.id, back.email);
    rows.set(q.id, back.row);
    requeued.push({ email: back.email, emailMoved: true, rows: [back.row] });
  }
  await storeChanges(trx, requeued, ctx.now);
  const unsure = orphans.filter((q) => q.dataStarted && emails.has(q.emailId));
  if (unsure.length) {
    const items = unsure.map((q) => ({
      row: q,
      outcomes: ambiguousAfterCrash(emails.get(q.emailId)!, q),
      result: { outcomes: new Map() },
    }));
    await recordOutcomes(trx, items, { ...ctx, owner: null }, emails);
  }
  return orphans.length;
}
