import type { EmailStatus, Email, Recipient, RecipientStatus } from './email.js';
import type { QueueRow, QueueState } from './queue.repo.js';

// The moves of LIFECYCLE.md, as tables: part of the state machine (lifecycle.ts).

/** A move the state machine does not allow: a fault of ours, never a client's. */
export class IllegalTransition extends Error {
  constructor(what: string, from: string, to: string) {
    super(`illegal ${what} transition ${from} → ${to}`);
    this.name = 'IllegalTransition';
  }
}

// From each state, the states a transition may lead to (staying put included).
const EMAIL_MOVES: Record<EmailStatus, readonly EmailStatus[]> = {
  // POST /v1/emails/{id}/cancel, before any attempt
  scheduled: ['scheduled', 'submitting', 'cancelled'],
  queued: ['queued', 'scheduled', 'submitting', 'cancelled'],
  submitting: ['submitting', 'queued', 'accepted', 'failed', 'ambiguous', 'suppressed'],
  // another queue row of the email may still go out
  accepted: ['accepted', 'submitting'],
  // `posthorn queue retry`, or another queue row of the email going out
  ambiguous: ['ambiguous', 'submitting', 'queued', 'accepted'],
  failed: ['failed'],
  suppressed: ['suppressed'],
  cancelled: ['cancelled'],
};
const RECIPIENT_MOVES: Record<RecipientStatus, readonly RecipientStatus[]> = {
  queued: [
    'queued',
    'deferred',
    'delivered',
    'bounced',
    'complained',
    'failed',
    'ambiguous',
    'suppressed',
    'cancelled',
  ],
  deferred: ['deferred', 'delivered', 'bounced', 'complained', 'failed', 'ambiguous', 'suppressed'],
  // a late DSN or an ARF report
  delivered: ['delivered', 'bounced', 'complained'],
  bounced: ['bounced'],
  complained: ['complained'],
  failed: ['failed'],
  ambiguous: ['ambiguous', 'queued'],
  suppressed: ['suppressed'],
  cancelled: ['cancelled'],
};
const QUEUE_MOVES: Record<QueueState, readonly QueueState[]> = {
  // done: a cancelled email's rows, never attempted
  queued: ['queued', 'submitting', 'done'],
  submitting: ['submitting', 'queued', 'done'],
  // an ambiguous recipient retried by an operator
  done: ['done', 'queued'],
};

function check<S extends string>(what: string, moves: Record<S, readonly S[]>, from: S, to: S): S {
  if (!moves[from].includes(to)) throw new IllegalTransition(what, from, to);
  return to;
}

export const moveEmail = (e: Email, to: EmailStatus): EmailStatus => check('email', EMAIL_MOVES, e.status, to);
export const moveRecipient = (r: Recipient, to: RecipientStatus): RecipientStatus =>
  check('recipient', RECIPIENT_MOVES, r.status, to);
export const moveRow = (q: QueueRow, to: QueueState): QueueState => check('queue row', QUEUE_MOVES, q.state, to);
