import { classifyBounce } from '../modules/receiving/bounces/classify-bounce.js';
import type { RecipientOutcome } from '../modules/sending/emails/lifecycle.js';
import type { Recipient } from '../modules/sending/emails/email.js';
import type { AttemptResult } from './attempt.js';
import type { SendResult } from './smtp-sender.js';

// The small steps of live-attempt.ts around the SMTP transaction: an answer as the state
// machine's outcome, one outcome for every recipient, and the mark before DATA written once.

/** Step classify: the sender's verdict on one recipient, as the state machine's outcome. */
export function classify(got: SendResult['recipients'][number] | undefined, res: SendResult): RecipientOutcome {
  const reply = got?.reply ?? 'no answer';
  switch (got?.kind ?? 'deferred') {
    case 'bounced':
      return {
        kind: 'bounced',
        bounce: got?.bounce ?? classifyBounce({ diagnostic: reply, final: true }),
        reply,
        mx: res.host,
      };
    case 'delivered':
      return { kind: 'delivered', reply, mx: res.host };
    case 'ambiguous':
      return { kind: 'ambiguous', stage: 'data', reply, mx: res.host };
    case 'deferred':
      return { kind: 'deferred', reply, mx: res.host };
  }
}

export function failAll(recipients: Recipient[], outcome: RecipientOutcome, failureReason?: string): AttemptResult {
  return { outcomes: new Map(recipients.map((r) => [r.id, outcome])), ...(failureReason ? { failureReason } : {}) };
}

/** The mark before DATA is written once for the attempt, however many transactions it makes (again after a failed one). */
export function markOnce(mark: () => Promise<void>): () => Promise<void> {
  let marked = false;
  return async () => {
    if (marked) return;
    await mark();
    marked = true;
  };
}
