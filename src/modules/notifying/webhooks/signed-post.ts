import { iso, type Clock } from '../../../lib/time.js';
import type { OutboxEvent } from '../events/events.repo.js';
import { resendEventBody } from './resend-payload.js';
import { signedHeaders } from './sign.js';
import type { PayloadFormat } from './webhook-formats.js';
import type { Endpoint } from './webhooks.repo.js';

// One attempt's HTTP request: the event's body in the endpoint's payload format, signed in its
// signature format (interface §6 by default), and what its answer means.

/** The HTTP POST, through the SSRF guard; rejects on network failure or timeout. */
export type WebhookPost = (
  url: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
) => Promise<{ status: number; durationMs: number }>;

/** how one POST went: error is null for a 2xx */
export interface PostOutcome {
  status: number | null;
  error: string | null;
  durationMs: number;
}

export interface PostContext {
  post: WebhookPost;
  userAgent: string;
  clock: Clock;
  /** the dispatcher's shutdown */
  signal: AbortSignal;
}

/** The body of every attempt at a delivery of `event` to an endpoint taking `format`. */
export function eventBody(event: OutboxEvent, format: PayloadFormat): string {
  switch (format) {
    case 'service':
      return JSON.stringify({
        id: event.id,
        object: 'event',
        type: event.type,
        created_at: iso(event.createdAt),
        simulated: event.simulated,
        data: event.data,
      });
    case 'resend':
      return JSON.stringify(resendEventBody(event));
  }
}

/** One signed POST; null when shutdown cut it short (the claim makes it go out again). */
export async function postSigned(
  c: PostContext,
  endpoint: Endpoint,
  eventId: string,
  attempt: number,
  body: string,
): Promise<PostOutcome | null> {
  // Signed afresh at every attempt: a new timestamp each time (interface §6).
  const now = c.clock.now();
  const headers = {
    'Content-Type': 'application/json',
    'User-Agent': c.userAgent,
    ...signedHeaders(endpoint, eventId, attempt, body, now),
  };
  try {
    const res = await c.post(endpoint.url, headers, body, c.signal);
    const error =
      res.status >= 200 && res.status <= 299
        ? null
        : res.status >= 300 && res.status < 400
          ? `redirect (${res.status}) not followed`
          : `HTTP ${res.status}`;
    return { status: res.status, error, durationMs: res.durationMs };
  } catch (e) {
    if (c.signal.aborted) return null;
    return { status: null, error: (e as Error).message, durationMs: c.clock.now() - now };
  }
}
