import { newId } from '../../../lib/ids.js';
import type { EventType } from '../events/event-types.js';
import type { OutboxEvent } from '../events/events.repo.js';

// A test event (POST /v1/webhooks/{id}/test, the dashboard's "Send test event"): an email event of
// the chosen type with sample data, `simulated: true`, sent to one endpoint only (no I/O here).

/** The types a test event can have: the email events, which share one shape (email.received has its own). */
export const TEST_EVENT_TYPES = [
  'email.sent',
  'email.delivered',
  'email.delivery_delayed',
  'email.bounced',
  'email.complained',
  'email.failed',
  'email.opened',
  'email.clicked',
  'email.scheduled',
  'email.suppressed',
  'email.ambiguous',
  'email.cancelled',
  'email.unsubscribed',
] as const satisfies readonly EventType[];

export type TestEventType = (typeof TEST_EVENT_TYPES)[number];

/** The email a test event is about: an id of the right form that no email has (its time part is zero). */
export const TEST_EMAIL_ID = 'em_00000000000000000000000000';
const RECIPIENT = 'delivered@example.com';

/** What a real event of each type adds under `details` (docs/webhooks.md), with sample values. */
const DETAILS: Partial<Record<TestEventType, Record<string, unknown>>> = {
  'email.bounced': {
    bounce_type: 'Permanent',
    reason: 'mailbox_unknown',
    status: '5.1.1',
    reply: `550 5.1.1 <${RECIPIENT}>: Recipient address rejected: User unknown (a test event)`,
  },
  'email.delivery_delayed': { reply: '451 4.7.1 Try again later (a test event)' },
  'email.failed': { reason: 'a test event: nothing was sent' },
  'email.suppressed': { reason: 'bounced' },
  'email.clicked': { url: 'https://example.com/', user_agent: 'Mozilla/5.0 (a test event)' },
  'email.opened': { user_agent: 'Mozilla/5.0 (a test event)' },
};

export function testEvent(projectId: string, type: TestEventType, now: number): OutboxEvent {
  return {
    id: newId('event', now),
    projectId,
    type,
    // about no stored email: the email's timeline does not show it, and the log links nowhere
    emailId: null,
    recipient: RECIPIENT,
    simulated: true,
    data: {
      email_id: TEST_EMAIL_ID,
      request_id: null,
      environment: 'test',
      from: 'Posthorn <test@example.com>',
      subject: 'A test event from Posthorn',
      tags: {},
      recipient: RECIPIENT,
      details: DETAILS[type] ?? {},
    },
    createdAt: now,
  };
}
