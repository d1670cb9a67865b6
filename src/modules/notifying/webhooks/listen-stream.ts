// The wire format of `posthorn listen` (docs/webhooks.md), both ends: what
// GET /v1/webhooks/{id}/listen writes and what the CLI reads. A Server-Sent
// Events stream (text/event-stream, WHATWG HTML §9.2): one `data:` line of
// JSON per delivery, a comment now and then so that an idle connection is
// not taken for a dead one. No I/O.

/** A delivery as an HTTPS endpoint would get it: the exact body and the signed headers. */
export interface ListenFrame {
  headers: Record<string, string>;
  body: string;
}

/**
 * What became of a delivery handed to a listen endpoint: queued on the
 * stream connected to it; no stream connected in this process; or one is,
 * but its reader is too far behind to be given more.
 */
export type ListenOutcome = 'written' | 'not_connected' | 'behind';

/** Where a dispatcher hands a delivery to a listen endpoint. */
export type ListenSink = (endpointId: string, frame: ListenFrame) => Promise<ListenOutcome>;

/**
 * Why the API ended a stream, told in its last line (`: end: <reason>`) so
 * that the CLI can say what happened rather than guess at a dropped connection.
 */
export const LISTEN_ENDS = [
  'endpoint_deleted',
  'endpoint_changed',
  'key_revoked',
  'project_suspended',
  'server_stopping',
] as const;
export type ListenEnd = (typeof LISTEN_ENDS)[number];

/** How often the stream carries a comment: often enough for proxies' idle timeouts (60 s is common) and for the CLI to notice a dead connection. */
export const HEARTBEAT_MS = 15_000;

/** A listen endpoint's url: a marker no request is ever made to (the create and update schemas take https only). */
export const LISTEN_URL_PREFIX = 'posthorn-listen:';

export const listenUrl = (endpointId: string): string => `${LISTEN_URL_PREFIX}${endpointId}`;

/** The endpoint a listen marker names; null for any other url. */
export function listenEndpointOf(url: string): string | null {
  return url.startsWith(LISTEN_URL_PREFIX) ? url.slice(LISTEN_URL_PREFIX.length) : null;
}

/** JSON.stringify escapes line breaks, so a frame is one `data:` line. */
export const eventFrame = (frame: ListenFrame): string => `data: ${JSON.stringify(frame)}\n\n`;

/** A comment line: read and ignored by every SSE client. */
export const commentFrame = (text: string): string => `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;

/** The last line of a stream the API ends: a comment, so any other SSE client ignores it. */
export const endFrame = (reason: ListenEnd): string => commentFrame(`end: ${reason}`);

const END_COMMENT = /^: ?end: (\S+)$/;

/**
 * Reads an event stream chunk by chunk (a frame may be split anywhere, a
 * multi-byte character too when fed Buffers through a TextDecoder); returns
 * the frames completed by each chunk. Comments, `event:`/`id:`/`retry:`
 * fields and data that is not a frame are skipped; an end comment is kept
 * in `ended`.
 */
export class EventStreamReader {
  private pending = '';
  private data: string[] = [];
  /** why the API ended the stream, once its end comment was read */
  ended: ListenEnd | null = null;

  push(chunk: string): ListenFrame[] {
    this.pending += chunk;
    const out: ListenFrame[] = [];
    let nl: number;
    while ((nl = this.pending.search(/\r\n|\r|\n/)) !== -1) {
      // a CR that ends the chunk may be the first half of a CRLF
      if (nl === this.pending.length - 1 && this.pending[nl] === '\r') break;
      const line = this.pending.slice(0, nl);
      this.pending = this.pending.slice(nl + (this.pending.startsWith('\r\n', nl) ? 2 : 1));
      if (line === '') {
        const frame = this.dispatch();
        if (frame) out.push(frame);
      } else if (line.startsWith('data:')) this.data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      else if (line.startsWith(':')) this.ended = endOf(line) ?? this.ended;
    }
    return out;
  }

  private dispatch(): ListenFrame | null {
    if (!this.data.length) return null;
    const text = this.data.join('\n');
    this.data = [];
    try {
      const v = JSON.parse(text) as Partial<ListenFrame>;
      return v && typeof v.body === 'string' && v.headers && typeof v.headers === 'object'
        ? { headers: v.headers, body: v.body }
        : null;
    } catch {
      return null;
    }
  }
}

function endOf(comment: string): ListenEnd | null {
  const reason = END_COMMENT.exec(comment)?.[1];
  return (LISTEN_ENDS as readonly string[]).includes(reason ?? '') ? (reason as ListenEnd) : null;
}
