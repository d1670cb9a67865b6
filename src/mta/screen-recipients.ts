import type { Email, Recipient } from '../modules/sending/emails/email.js';
import { waitingOn, type RecipientOutcome } from '../modules/sending/emails/lifecycle.js';
import type { QueueRow } from '../modules/sending/emails/queue.repo.js';
import { asksForUnsubscribe } from '../modules/sending/emails/list-unsubscribe.js';
import { blocksSend, suppressionKey, type SuppressionReason } from '../modules/sending/suppressions/suppression.js';

/** A claimed row's recipients: those to send to, and those suppressed since the 202 (their outcome, already known). */
export interface Screened {
  sendable: Recipient[];
  outcomes: Map<string, RecipientOutcome>;
}

/** The recipients of a row still waiting, minus those on the suppression list (read again: it may have grown since the 202). */
export function screen(email: Email, q: QueueRow, suppressed: Map<string, SuppressionReason>): Screened {
  const outcomes = new Map<string, RecipientOutcome>();
  const asks = asksForUnsubscribe(email.headers);
  const sendable = waitingOn(email, q).filter((r) => {
    const reason = suppressed.get(suppressionKey(email.projectId, r.address));
    if (!reason || !blocksSend(reason, asks)) return true;
    outcomes.set(r.id, { kind: 'suppressed', reason });
    return false;
  });
  return { sendable, outcomes };
}
