import { newId } from '../../../lib/ids.js';
import type { EventType } from '../../notifying/events/event-types.js';
import type { OutboxEvent } from '../../notifying/events/events.repo.js';
import type { Email } from './email.js';

/**
 * An event about an email, payload `data` per interface §6: never the bodies
 * or template variables. `recipient` is the address concerned, or the first
 * recipient for events about the whole email (sent, scheduled, failed).
 */
export function emailEvent(
  email: Email,
  type: EventType,
  now: number,
  recipient?: string | null,
  details: Record<string, unknown> = {},
): OutboxEvent {
  const rcpt = recipient ?? email.recipients[0]?.address ?? null;
  return {
    id: newId('event', now),
    projectId: email.projectId,
    type,
    emailId: email.id,
    recipient: rcpt,
    simulated: email.environment === 'test',
    data: {
      email_id: email.id,
      request_id: email.requestId,
      environment: email.environment,
      from: email.from,
      subject: email.subject,
      tags: email.tags,
      recipient: rcpt,
      ...(email.broadcastId ? { broadcast_id: email.broadcastId } : {}),
      details,
    },
    createdAt: now,
  };
}
