import type { Knex } from 'knex';
import { lockRows } from '../../../store/db.js';
import { insertEvents, type OutboxEvent } from '../../notifying/events/events.repo.js';
import { suppressAfterMail } from '../suppressions/suppress-after-mail.js';
import type { Email, Recipient } from './email.js';
import { saveRecipient } from './email-recipients.repo.js';
import { deleteEmails, saveEmailState } from './email-rows.repo.js';
import { findEmailsById } from './emails.repo.js';
import { canWithdraw } from './lifecycle.js';
import {
  deleteQueueRow,
  lockQueueRowsOfEmails,
  queueRowsOfEmails,
  saveQueueRow,
  withdrawCandidates,
  type QueueRow,
} from './queue.repo.js';

/**
 * The one writer of the email state machine. The pure transitions of lifecycle*.ts decide a
 * change; this stores it — the email's columns, its recipients, its queue rows, the events and the
 * suppressions it causes — in the caller's transaction, so that a state and its events commit
 * together (LIFECYCLE.md). The accept's inserts and the claim are the two other writes of these
 * tables: the accept creates rows (accept-transaction.ts), the claim moves many rows in one
 * statement (mta/claim-batch.ts, checked against lifecycle.ts claimRow/claimEmail by its test).
 */
export interface EmailChange {
  /** the email after the change, its recipients included */
  email: Email;
  /** whether the email's own columns moved (status, attempts, schedule, reason): saved when true */
  emailMoved: boolean;
  /** the recipients the change moved */
  recipients?: readonly Recipient[];
  /** queue rows to save as they are here */
  rows?: readonly QueueRow[];
  /** queue rows the change ends (a finished row of test mail) */
  dropRows?: readonly string[];
  events?: readonly OutboxEvent[];
  /** addresses the change suppresses: a Permanent bounce or a complaint of live mail */
  suppress?: ReadonlyArray<{ address: string; reason: 'bounce' | 'complaint' }>;
}

/**
 * Locks the emails to change (PostgreSQL; another process may be changing the same email). The order is
 * the claim's: queue rows, then emails. A change that writes queue rows nobody holds (reschedule,
 * `queue retry`) locks the emails' rows first (`queueRows`); one that writes only the row it holds
 * by lease (an attempt's outcome), or no row (a report), locks the emails alone, as does the claim
 * itself after its SKIP LOCKED, so that none waits on a row another holds while holding an email.
 */
export async function lockForChange(trx: Knex.Transaction, ids: string[], o: { queueRows: boolean }): Promise<void> {
  if (o.queueRows) await lockQueueRowsOfEmails(trx, ids);
  await lockRows(trx, 'emails', ids);
}

/** lockForChange, then the emails as stored now (their recipients, not their bodies), unless `known`. */
export async function lockEmails(
  trx: Knex.Transaction,
  ids: string[],
  o: { queueRows: boolean; known?: Map<string, Email> },
): Promise<Map<string, Email>> {
  await lockForChange(trx, ids, o);
  return o.known ?? new Map((await findEmailsById(trx, ids, false)).map((e) => [e.id, e]));
}

/** Stores changes the state machine decided, in order, then their events (and the suppressions' own). */
export async function storeChanges(trx: Knex.Transaction, changes: readonly EmailChange[], now: number): Promise<void> {
  const events: OutboxEvent[] = [];
  for (const c of changes) {
    if (c.emailMoved) await saveEmailState(trx, c.email);
    for (const r of c.recipients ?? []) await saveRecipient(trx, r);
    for (const q of c.rows ?? []) await saveQueueRow(trx, q);
    for (const id of c.dropRows ?? []) await deleteQueueRow(trx, id);
    events.push(...(c.events ?? []));
    for (const s of c.suppress ?? []) events.push(...(await suppressAfterMail(trx, c.email, s, now)));
  }
  await insertEvents(trx, events);
}

/**
 * A broadcast's cancel: its emails the state machine lets go (lifecycle.ts canWithdraw) are taken
 * back out of the queue and deleted. Returns how many.
 */
export async function withdrawEmails(trx: Knex.Transaction, broadcastId: string): Promise<number> {
  const candidates = await withdrawCandidates(trx, broadcastId);
  let withdrawn = 0;
  for (let i = 0; i < candidates.length; i += 500) {
    const some = candidates.slice(i, i + 500);
    const emails = await lockEmails(trx, some, { queueRows: false });
    const rows = new Map<string, QueueRow[]>();
    for (const q of await queueRowsOfEmails(trx, some)) rows.set(q.emailId, [...(rows.get(q.emailId) ?? []), q]);
    const gone = some.filter((id) => emails.has(id) && canWithdraw(emails.get(id)!, rows.get(id) ?? []));
    await deleteEmails(trx, gone);
    withdrawn += gone.length;
  }
  return withdrawn;
}
