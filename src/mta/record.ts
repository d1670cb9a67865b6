import type { Knex } from 'knex';
import type { Logger } from '../log/logger.js';
import { lockRows } from '../store/db.js';
import type { Email } from '../modules/sending/emails/email.js';
import { saveRecipient } from '../modules/sending/emails/email-recipients.repo.js';
import { saveEmailState } from '../modules/sending/emails/email-rows.repo.js';
import { findEmailsById } from '../modules/sending/emails/emails.repo.js';
import {
  ambiguousAfterCrash,
  applyOutcomes,
  keepsQueueRow,
  requeueOrphan,
  type RecipientOutcome,
} from '../modules/sending/emails/lifecycle.js';
import {
  deleteQueueRow,
  orphanedRows,
  queueRowsOfEmails,
  saveQueueRow,
  type QueueRow,
} from '../modules/sending/emails/queue.repo.js';
import { insertEvents, type OutboxEvent } from '../modules/notifying/events/events.repo.js';
import { suppressAfterMail } from '../modules/sending/suppressions/suppress-after-mail.js';
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
  // Other processes may be recording other queue rows of the same emails (PostgreSQL).
  await lockRows(trx, 'emails', ids);
  const emails = read ?? new Map((await findEmailsById(trx, ids, false)).map((e) => [e.id, e]));
  const rows = new Map((await queueRowsOfEmails(trx, ids)).map((q) => [q.id, q]));
  const events: OutboxEvent[] = [];
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
    });
    emails.set(email.id, change.email);
    rows.set(row.id, change.row);
    await saveEmailState(trx, change.email);
    for (const r of change.recipients) if (outcomes.has(r.id)) await saveRecipient(trx, r);
    if (keepsQueueRow(change.email, change.row)) await saveQueueRow(trx, change.row);
    else await deleteQueueRow(trx, row.id);
    events.push(...change.events);
    for (const s of change.suppress) events.push(...(await suppressAfterMail(trx, email, s, ctx.now)));
  }
  await insertEvents(trx, events);
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
  await lockRows(trx, 'emails', ids);
  const emails = new Map((await findEmailsById(trx, ids, false)).map((e) => [e.id, e]));
  const rows = new Map((await queueRowsOfEmails(trx, ids)).map((q) => [q.id, q]));
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
    await saveQueueRow(trx, back.row);
    await saveEmailState(trx, back.email);
  }
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
