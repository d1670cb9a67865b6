import type { Bounce } from '../../receiving/bounces/classify-bounce.js';
import type { OutboxEvent } from '../../notifying/events/events.repo.js';
import { emailEvent } from './email-events.js';
import type { Email, Recipient } from './email.js';
import { bounceDetails, bouncedRecipient, mayBounceSuppress, type Change } from './lifecycle-outcomes.js';
import { moveRecipient } from './lifecycle-moves.js';

/** What a message that came back (a DSN, a bounce, an ARF report) says about one recipient. */
export type ReportVerdict =
  | { kind: 'bounced'; bounce: Bounce; reportingMta: string | null }
  | { kind: 'delayed'; bounce: Bounce; reportingMta: string | null }
  | { kind: 'complained'; feedbackType: string; userAgent: string | null };

export type ReportChange = Pick<Change, 'email' | 'recipients' | 'events' | 'suppress'>;

/**
 * A report about a recipient of a sent email (LIFECYCLE Recipient):
 * delivered → bounced by a late DSN (suppresses when Permanent, may when soft and lasting), delivered →
 * complained by an ARF report (suppresses); a DSN that says "delayed"
 * changes no state and emits email.delivery_delayed once per recipient.
 * A report about a recipient that is already bounced or complained, or was
 * never handed over, changes nothing: null. Only live mail is suppressed.
 */
export function applyReport(email: Email, recipientId: string, v: ReportVerdict, now: number): ReportChange | null {
  const r = email.recipients.find((x) => x.id === recipientId);
  if (!r) return null;
  const live = email.environment === 'live';
  const events: OutboxEvent[] = [];
  const suppress: ReportChange['suppress'] = [];
  let next: Recipient;
  switch (v.kind) {
    case 'delayed':
      if (r.delayNotified || (r.status !== 'delivered' && r.status !== 'deferred')) return null;
      events.push(emailEvent(email, 'email.delivery_delayed', now, r.address, delayDetails(v.bounce, v.reportingMta)));
      next = { ...r, delayNotified: true, updatedAt: now };
      break;
    case 'bounced':
      if (r.status !== 'delivered') return null;
      events.push(emailEvent(email, 'email.bounced', now, r.address, bounceDetails(v.bounce, v.reportingMta)));
      if (live && mayBounceSuppress(v.bounce))
        suppress.push({ address: r.address, reason: 'bounce', bounce: v.bounce });
      next = {
        ...r,
        status: moveRecipient(r, 'bounced'),
        details: bouncedRecipient(v.bounce.diagnostic, v.bounce, r.details?.mx ?? null),
        updatedAt: now,
      };
      break;
    case 'complained':
      if (r.status !== 'delivered') return null;
      events.push(
        emailEvent(email, 'email.complained', now, r.address, {
          feedback_type: v.feedbackType,
          user_agent: v.userAgent,
        }),
      );
      if (live) suppress.push({ address: r.address, reason: 'complaint' });
      next = { ...r, status: moveRecipient(r, 'complained'), updatedAt: now };
      break;
  }
  const recipients = email.recipients.map((x) => (x.id === r.id ? next : x));
  return { email: { ...email, recipients, updatedAt: now }, recipients: [next], events, suppress };
}

function delayDetails(b: Bounce, reportingMta: string | null): Record<string, unknown> {
  const d: Record<string, unknown> = { diagnostic: b.diagnostic, status: b.status, reason: b.reason };
  if (reportingMta) d.reporting_mta = reportingMta;
  return d;
}
