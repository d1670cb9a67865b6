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
) => Promise<{ status: number; durationMs: number; body?: Buffer }>;

/** how one POST went: error is null for a 2xx */
export interface PostOutcome {
  status: number | null;
  error: string | null;
  durationMs: number;
  /** the answer's body, its first ANSWER_EXCERPT_BYTES (answerExcerpt); null without one */
  responseBody: string | null;
}

/** What the delivery log keeps of an answer's body. */
export const ANSWER_EXCERPT_BYTES = 1024;

/**
 * The first KiB of an answer's body as text, for the delivery log: a character cut in half at the end
 * is dropped, and NUL (which PostgreSQL's text refuses) becomes U+FFFD. Null for an empty body.
 */
export function answerExcerpt(body: Buffer | undefined): string | null {
  if (!body?.length) return null;
  const text = body.subarray(0, ANSWER_EXCERPT_BYTES).toString('utf8');
  const whole = body.length > ANSWER_EXCERPT_BYTES ? text.replace(/\uFFFD$/, '') : text;
  return whole.replaceAll('\u0000', '\uFFFD');
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
    return { status: res.status, error, durationMs: res.durationMs, responseBody: answerExcerpt(res.body) };
  } catch (e) {
    if (c.signal.aborted) return null;
    return { status: null, error: (e as Error).message, durationMs: c.clock.now() - now, responseBody: null };
  }
}
