import type { Accepted } from '../../src/modules/sending/emails/accept-rules.js';
import type { Email } from '../../src/modules/sending/emails/email.js';

/** The email an accepted request stored (a request without an Idempotency-Key is never a replay). */
export async function emailOf(accepted: Promise<Accepted>): Promise<Email> {
  const a = await accepted;
  if (!a.email) throw new Error('a replay was not expected here');
  return a.email;
}
