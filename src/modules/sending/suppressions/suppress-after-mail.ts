import type { Knex } from 'knex';
import type { Bounce } from '../../receiving/bounces/classify-bounce.js';
import { reasonInfo } from '../../receiving/bounces/reasons.js';
import type { OutboxEvent } from '../../notifying/events/events.repo.js';
import { leaveBroadcastMail } from '../../audience/contacts/leave-broadcasts.js';
import { findProject } from '../../account/projects/projects.repo.js';
import { recordSoftBounce } from './soft-bounces.repo.js';
import { suppressFromMail } from './suppressions.repo.js';

/** The email a bounce or complaint was about (an Email; only this much is read). */
export interface ReportedMail {
  id: string;
  projectId: string;
  broadcastId: string | null;
  contactId: string | null;
}

/** What the state machine says may suppress an address: a complaint, or a bounce (hard, or soft of a lasting reason). */
export interface MailSuppression {
  address: string;
  reason: 'bounce' | 'complaint';
  bounce?: Bounce;
}

/**
 * Where a bounce or a complaint suppresses the address. The state machine decides what may
 * (lifecycle-outcomes.ts: a Permanent bounce, a soft one of a lasting reason, a complaint); this
 * writes it, in the transaction of the change:
 * - a hard bounce: a suppression, with the bounce's reason, status and words;
 * - a soft bounce of a lasting reason (a full mailbox, a suspended account): counted while the
 *   project's soft-bounce policy is on, and a suppression once N fall within M days;
 * - a complaint: a suppression, but for a complaint about a broadcast email, which takes the contact
 *   out of broadcast mail instead (a complaint about a newsletter must not stop the person's receipts).
 * Returns the events to store with it.
 */
export async function suppressAfterMail(
  trx: Knex.Transaction,
  email: ReportedMail,
  s: MailSuppression,
  now: number,
): Promise<OutboxEvent[]> {
  if (s.reason === 'complaint' && email.broadcastId) return leaveBroadcastMail(trx, email, now);
  const at = { projectId: email.projectId, address: s.address, emailId: email.id, createdAt: now };
  const bounce = s.bounce && { reason: s.bounce.reason, status: s.bounce.status, diagnostic: s.bounce.diagnostic };
  if (s.bounce && s.bounce.bounceType !== 'Permanent') {
    const policy = (await findProject(trx, email.projectId))?.softBounceSuppression;
    if (!policy || !isLasting(s.bounce.reason)) return [];
    const seen = await recordSoftBounce(trx, { ...at, reason: s.bounce.reason }, policy.days);
    if (seen < policy.count) return [];
  }
  await suppressFromMail(trx, { ...at, reason: s.reason, bounce });
  return [];
}

const isLasting = (reason: string): boolean => reasonInfo(reason)?.repeatable === true;
