// posthorn listen --forward-to: which URLs it may name, and the request that
// hands an event on to the local app as a real delivery would.
import { isIPv4 } from 'node:net';
import { request, type Agent } from 'undici';
import { CliError } from './base.js';
import { describeFailure } from './api-client.js';
import type { ListenFrame } from '../modules/notifying/webhooks/listen-stream.js';

/** How the local app answered a forwarded event. */
export interface Forwarded {
  status: number | null;
  error: string | null;
  durationMs: number;
}

/** The answer of the local app, bounded: an event waits for it before the next is forwarded. */
const FORWARD_TIMEOUT_MS = 30_000;

/**
 * --forward-to: https, or plain http to this machine only. The events carry
 * addresses and subjects, and the signature does not hide them: in clear
 * text they may cross no network.
 */
export function forwardUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError(
      'usage_error',
      `--forward-to: ${JSON.stringify(value)} is not a URL (e.g. http://localhost:3000/webhooks)`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CliError('usage_error', `--forward-to: an http or https URL, not ${url.protocol}`);
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
    throw new CliError(
      'usage_error',
      `--forward-to: plain http goes only to this machine (localhost, 127.0.0.0/8 or [::1]); ${url.hostname} needs https`,
    );
  }
  return url.href;
}

/** localhost, 127.0.0.0/8 or ::1 (URL has normalized the host: lower case, 127.1 written out, [::1] in brackets). */
function isLoopback(hostname: string): boolean {
  if (hostname === 'localhost' || hostname === '[::1]') return true;
  return isIPv4(hostname) && hostname.startsWith('127.');
}

/** The request a real delivery makes: the same body, the same signed headers. */
export async function forward(url: string, frame: ListenFrame, agent: Agent): Promise<Forwarded> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  try {
    const res = await request(url, {
      method: 'POST',
      headers: frame.headers,
      body: frame.body,
      dispatcher: agent,
      headersTimeout: FORWARD_TIMEOUT_MS,
      bodyTimeout: FORWARD_TIMEOUT_MS,
    });
    await res.body.dump();
    return { status: res.statusCode, error: null, durationMs: took() };
  } catch (e) {
    return { status: null, error: describeFailure(e), durationMs: took() };
  }
}
