import { iso } from '../../../lib/time.js';
import type { OutboxEvent } from '../../notifying/events/events.repo.js';
import type { WebhookDelivery } from '../../notifying/webhooks/webhook-deliveries.repo.js';
import type { Email, Recipient } from './email.js';

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
    // interface §2.1's {address, kind, status}, and the bounce of a recipient that bounced
    recipients: e.recipients.map((r) => {
      const bounce = bounceOf(r);
      return bounce
        ? { address: r.address, kind: r.kind, status: r.status, bounce }
        : { address: r.address, kind: r.kind, status: r.status };
    }),
    created_at: iso(e.createdAt),
    updated_at: iso(e.updatedAt),
  };
}

/**
 * A bounced recipient's bounce (docs/bounces.md): `bounce_type`, `reason`, the enhanced `status`
 * and the server's words; null (and left out of the recipient) for one that did not bounce.
 */
function bounceOf(r: Recipient) {
  const d = r.details;
  if (r.status !== 'bounced' || !d?.bounce_type) return null;
  return {
    bounce_type: d.bounce_type,
    reason: d.reason ?? null,
    status: d.status ?? null,
    diagnostic: d.reply ?? null,
  };
}

/** GET /v1/emails/{id}/content: what was sent, as rendered (after a template, before tracking links). */
export function presentEmailContent(e: Email) {
  return { id: e.id, object: 'email_content' as const, subject: e.subject, html: e.html, text: e.text };
}

/** GET /v1/emails/{id}/events: one event of the email's timeline, with the webhook deliveries made of it. */
export function presentEmailEvent(e: OutboxEvent, deliveries: WebhookDelivery[]) {
  return {
    id: e.id,
    object: 'event' as const,
    type: e.type,
    recipient: e.recipient,
    simulated: e.simulated,
    data: e.data,
    created_at: iso(e.createdAt),
    webhook_deliveries: deliveries.map((d) => ({
      id: d.id,
      endpoint_id: d.endpointId,
      status: d.state,
      attempts: d.attempts,
      last_status_code: d.lastStatus,
      last_error: d.lastError,
    })),
  };
}
