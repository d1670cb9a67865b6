import type { Email, Recipient } from '../modules/sending/emails/email.js';
import type { RecipientOutcome } from '../modules/sending/emails/lifecycle.js';
import type { QueueRow } from '../modules/sending/emails/queue.repo.js';

// What the queue worker asks of an attempt at one queue row, and what it records of it.

/** What an attempt at one queue row found out. */
export interface AttemptResult {
  outcomes: Map<string, RecipientOutcome>;
  providerMessageId?: string | null;
  failureReason?: string;
  /** recipients left without an outcome wait in the queue for their turn until then (traffic shaping) */
  heldUntil?: number;
}

export interface AttemptHooks {
  /** resolves once the store records that the message body is about to go out (commit included) */
  beforeData: () => Promise<void>;
}

/** One attempt at one queue row: SMTP for live mail (live-attempt.ts). */
export type Attempt = (
  email: Email,
  row: QueueRow,
  recipients: Recipient[],
  hooks: AttemptHooks,
) => Promise<AttemptResult>;

/**
 * An attempt that needs no I/O (the simulation of test keys): its outcome is
 * known at once, so it is recorded in the transaction that claims the row —
 * one commit instead of two, and no body read. Returns null for an email it
 * does not handle (live mail), which then gets a normal attempt.
 */
export type InstantAttempt = (email: Email, row: QueueRow, recipients: Recipient[]) => AttemptResult | null;
