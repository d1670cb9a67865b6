import type { Knex } from 'knex';
import { lockRows } from '../store/db.js';
import type { Lease } from '../store/lease.js';
import type { Email } from '../modules/sending/emails/email.js';
import { attachmentCounts } from '../modules/sending/emails/email-attachments.repo.js';
import { saveClaimedEmails } from '../modules/sending/emails/email-rows.repo.js';
import { findEmailsById } from '../modules/sending/emails/emails.repo.js';
import { claimEmail, claimRow, type RecipientOutcome } from '../modules/sending/emails/lifecycle.js';
import { claimDueRows, type QueueRow } from '../modules/sending/emails/queue.repo.js';
import type { SuppressionReason } from '../modules/sending/suppressions/suppression.js';
import { suppressedAmong } from '../modules/sending/suppressions/suppressions.repo.js';
import type { InstantAttempt } from './attempt.js';
import { recordOutcomes, type Completed, type RecordContext } from './record.js';
import { screen } from './screen-recipients.js';

// The queue worker's claiming transaction: due rows become submitting under a lease, and what
// their attempts need is read in the same transaction.

export interface ClaimRequest {
  now: number;
  limit: number;
  lease: Lease;
  /** how many broadcast rows may be among them */
  bulkLimit: number;
  instant?: InstantAttempt;
  /** read when outcomes of instant attempts are recorded */
  recordContext: () => RecordContext;
}

/** The rows a claim leaves for a normal attempt, with the emails and suppressions their attempts need. */
export interface ClaimedBatch {
  /** rows claimed, those settled at once included */
  count: number;
  rows: QueueRow[];
  emails: Map<string, Email>;
  suppressed: Map<string, SuppressionReason>;
}

/** Claims up to `limit` due rows; those whose attempt is instant are settled here, the rest returned. */
export async function claimBatch(trx: Knex.Transaction, o: ClaimRequest): Promise<ClaimedBatch> {
  const { now, lease } = o;
  const claimed = (await claimDueRows(trx, { now, limit: o.limit, lease, bulkLimit: o.bulkLimit })).map((q) =>
    claimRow(q, now, lease),
  );
  if (!claimed.length) return { count: 0, rows: claimed, emails: new Map(), suppressed: new Map() };
  // What every attempt of the batch needs, read once, here: on SQLite the writer's connection
  // has these pages cached, while a reader's cache is dropped at every commit.
  const ids = [...new Set(claimed.map((q) => q.emailId))];
  await lockRows(trx, 'emails', ids);
  const read = await findEmailsById(trx, ids);
  const suppressed = await suppressedAmong(
    trx,
    read.flatMap((e) => e.recipients.map((r) => ({ projectId: e.projectId, address: r.address }))),
    now,
  );
  // An attempt starts if any row of the email has someone left to send to; recipients all
  // suppressed since the 202 (a scheduled send) start none.
  const byId = new Map(read.map((e) => [e.id, e]));
  const attempted = new Set(
    claimed
      .filter((q) => byId.has(q.emailId) && screen(byId.get(q.emailId)!, q, suppressed).sendable.length)
      .map((q) => q.emailId),
  );
  const emails = new Map(read.map((e) => [e.id, claimEmail(e, now, attempted.has(e.id))]));
  const settled = o.instant
    ? await settleInstant(trx, o.instant, claimed, emails, suppressed, o.recordContext)
    : new Set<string>();
  const left = claimed.filter((q) => !settled.has(q.id));
  await markClaimed(
    trx,
    [...new Set(left.map((q) => q.emailId))].flatMap((id) => emails.get(id) ?? []),
    attempted,
    now,
  );
  return { count: claimed.length, rows: left, emails, suppressed };
}

/** The claimed emails left for a normal attempt are written as claimed, and learn how many attachments each has. */
async function markClaimed(
  trx: Knex.Transaction,
  claimed: Email[],
  attempted: Set<string>,
  now: number,
): Promise<void> {
  await saveClaimedEmails(trx, claimed, attempted, now);
  // so that building their messages reads attachments only for the few emails that have any
  const counts = await attachmentCounts(
    trx,
    claimed.map((e) => e.id),
  );
  // set on the claim's own copies: a spread adding the field would take V8's slow path
  for (const e of claimed) e.attachmentCount = counts.get(e.id) ?? 0;
}

/**
 * Claimed rows whose attempt is instant are attempted and recorded here, in
 * the claiming transaction (as submitting, then their outcome). Returns the
 * ids of the rows settled so. `emails` are as the claim leaves them.
 */
async function settleInstant(
  trx: Knex.Transaction,
  instant: InstantAttempt,
  claimed: QueueRow[],
  emails: Map<string, Email>,
  suppressed: Map<string, SuppressionReason>,
  recordContext: () => RecordContext,
): Promise<Set<string>> {
  const done: Completed[] = [];
  for (const q of claimed) {
    const email = emails.get(q.emailId);
    if (!email) continue;
    const { outcomes, sendable } = screen(email, q, suppressed);
    const result = sendable.length ? instant(email, q, sendable) : { outcomes: new Map<string, RecipientOutcome>() };
    if (!result) continue;
    for (const [id, o] of result.outcomes) outcomes.set(id, o);
    done.push({ row: q, outcomes, result });
  }
  // recordOutcomes works on a copy: the emails of rows left for a normal attempt stay as read
  if (done.length) await recordOutcomes(trx, done, recordContext(), new Map(emails));
  return new Set(done.map((c) => c.row.id));
}
