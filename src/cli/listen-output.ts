// What posthorn listen prints for each event: a line for people, or with
// --json a JSON document per line for programs.
import type { ListenFrame } from '../modules/notifying/webhooks/listen-stream.js';
import type { Forwarded } from './listen-forward.js';

export function writeLine(line: string): void {
  process.stdout.write(`${line}\n`);
}

interface Payload {
  id?: string;
  type?: string;
  created_at?: string;
  data?: { email_id?: unknown; recipient?: unknown };
}

function payloadOf(frame: ListenFrame): Payload {
  try {
    return JSON.parse(frame.body) as Payload;
  } catch {
    return {};
  }
}

/** One line per event: when, what, which email, to whom, and what the local app answered. */
export function eventLine(frame: ListenFrame, forwarded: Forwarded | null): string {
  const p = payloadOf(frame);
  const text = (v: unknown) => (typeof v === 'string' && v ? v : '-');
  const fields = [text(p.created_at), text(p.type).padEnd(24), text(p.data?.email_id), text(p.data?.recipient)];
  if (forwarded)
    fields.push(
      forwarded.status !== null ? `→ ${forwarded.status} (${forwarded.durationMs} ms)` : `→ error: ${forwarded.error}`,
    );
  return fields.join('  ');
}

/** --json: the whole payload, the headers it came with, and the local app's answer. */
export function jsonLine(frame: ListenFrame, forwardTo: string | null, forwarded: Forwarded | null) {
  let payload: unknown;
  try {
    payload = JSON.parse(frame.body);
  } catch {
    payload = frame.body;
  }
  return {
    headers: frame.headers,
    payload,
    ...(forwardTo && forwarded
      ? {
          forward: {
            url: forwardTo,
            status: forwarded.status,
            error: forwarded.error,
            duration_ms: forwarded.durationMs,
          },
        }
      : {}),
  };
}
