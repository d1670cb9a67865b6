import type { Bounce } from '../../receiving/bounces/classify-bounce.js';
import type { RecipientOutcome } from './lifecycle.js';
import type { Email, Recipient } from './email.js';

const SIMULATED_BOUNCE: Bounce = {
  bounceType: 'Permanent',
  reason: 'user_unknown',
  status: '5.1.1',
  diagnostic: '550 5.1.1 simulated bounce: the mailbox does not exist',
};

/** Test keys retry a simulated delay after this long, so a whole walk takes about a second. */
export const SIMULATED_RETRY_MS = [1000];

/**
 * CONTRACT §4: the local part of an address at the test domain picks the
 * outcome; any other address is delivered. Nothing leaves the machine.
 */
function simulateOutcome(address: string, testDomain: string, attempt: number): RecipientOutcome {
  const at = address.lastIndexOf('@');
  const local = address.slice(0, at).toLowerCase();
  const domain = address.slice(at + 1).toLowerCase();
  const delivered: RecipientOutcome = { kind: 'delivered', reply: '250 2.0.0 OK: simulated delivery' };
  if (domain !== testDomain) return delivered;
  switch (local) {
    case 'bounced':
      return { kind: 'bounced', bounce: SIMULATED_BOUNCE, reply: SIMULATED_BOUNCE.diagnostic };
    case 'complained':
      return { kind: 'complained', reply: '250 2.0.0 OK: simulated delivery, then a simulated spam complaint' };
    case 'delayed':
      return attempt <= 1
        ? { kind: 'deferred', reply: '451 4.2.0 simulated delay: the mailbox is temporarily unavailable' }
        : delivered;
    case 'ambiguous':
      return { kind: 'ambiguous', stage: 'data', reply: 'simulated: the connection was lost after the end of DATA' };
    default:
      return delivered;
  }
}

/**
 * One simulated attempt (the `attempt`-th) for each of the recipients, by
 * recipient id, and the provider message id an acceptance records: the
 * email's Message-ID, as direct delivery records it (LIFECYCLE: test keys
 * reach the same states, so an accepted test email has one too).
 */
export function simulateAttempt(
  email: Pick<Email, 'messageId'>,
  recipients: Recipient[],
  testDomain: string,
  attempt: number,
): { outcomes: Map<string, RecipientOutcome>; providerMessageId: string } {
  return {
    outcomes: new Map(recipients.map((r) => [r.id, simulateOutcome(r.address, testDomain, attempt)])),
    providerMessageId: email.messageId,
  };
}
