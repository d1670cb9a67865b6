import { iso } from '../../../lib/time.js';
import type { AttemptRecord, WebhookDelivery } from './webhook-deliveries.repo.js';
import type { LoggedDelivery } from './webhook-log.repo.js';
import type { Endpoint } from './webhooks.repo.js';

/** interface §2.5; the secret only through presentNewSecret */
export function presentEndpoint(e: Endpoint) {
  return {
    id: e.id,
    object: 'webhook_endpoint' as const,
    url: e.url,
    events: e.events,
    active: e.active,
    description: e.description,
    signature: e.signatureFormat,
    payload: e.payloadFormat,
    created_at: iso(e.createdAt),
    updated_at: iso(e.updatedAt),
  };
}

export function presentNewSecret(e: Endpoint) {
  return { ...presentEndpoint(e), secret: e.secret };
}

/** A delivery with its attempts; from the endpoint's log, with its event's type and email too. */
export function presentDelivery(d: WebhookDelivery | LoggedDelivery, attempts: AttemptRecord[]) {
  return {
    id: d.id,
    object: 'webhook_delivery' as const,
    endpoint_id: d.endpointId,
    event_id: d.eventId,
    ...('eventType' in d ? { event_type: d.eventType, email_id: d.emailId } : {}),
    status: d.state,
    attempts: d.attempts,
    next_attempt_at: d.state === 'pending' ? iso(d.nextAttemptAt) : null,
    last_status_code: d.lastStatus,
    last_error: d.lastError,
    created_at: iso(d.createdAt),
    attempt_log: attempts.map((a) => ({
      attempt: a.attempt,
      status_code: a.statusCode,
      response_ms: a.durationMs,
      error: a.error,
      response_body: a.responseBody,
      at: iso(a.createdAt),
    })),
  };
}
