import { iso } from '../../lib/time.js';
import type { Email } from './email.js';

/** interface §2.1, CONTRACT §4–5 (scheduled_at). */
export function presentEmail(e: Email) {
  return {
    id: e.id,
    object: 'email' as const,
    environment: e.environment,
    status: e.status,
    status_reason: e.statusReason,
    simulated: e.environment === 'test',
    from: e.from,
    to: e.to,
    cc: e.cc,
    bcc: e.bcc,
    reply_to: e.replyTo,
    subject: e.subject,
    template_id: e.templateId,
    template_version: e.templateVersion,
    tags: e.tags,
    provider_message_id: e.providerMessageId,
    request_id: e.requestId,
    attempts: e.attempts,
    scheduled_at: iso(e.scheduledAt),
    recipients: e.recipients.map((r) => ({ address: r.address, kind: r.kind, status: r.status })),
    created_at: iso(e.createdAt),
    updated_at: iso(e.updatedAt),
  };
}
