import { Readable } from 'node:stream';
import { classifyNoReply, classifyReply, type Classified } from './classify-reply.js';
import { SmtpPool, type Conn, type Destination, type SenderOptions } from './smtp-pool.js';
import { TlsPolicyError } from './tls-policy/tls-session.js';

export interface SendRequest {
  envelope: { from: string; to: string[] };
  raw: Buffer;
  /**
   * Called as the transaction begins; the first byte of the message body waits until it has
   * resolved (the queue records durably that the body may go out). Its commit runs while
   * MAIL, RCPT and DATA make their round trips instead of after them.
   */
  beforeData?: () => Promise<void>;
  /**
   * Asked once a connection is at hand, before MAIL FROM: false withdraws the message, which then
   * never started (traffic shaping: its provider was suspended while it waited for a connection).
   */
  mayStart?: () => boolean;
}

export interface RecipientResult extends Classified {
  address: string;
}

export interface SendResult {
  recipients: RecipientResult[];
  /** the destination that answered (or was tried last) */
  host: string;
  secure: boolean;
  /** the server's reply to the end of DATA, e.g. "250 2.0.0 Ok: queued as 4FhX1" */
  response?: string;
  dataStarted: boolean;
  /** withdrawn by mayStart before anything was sent */
  withdrawn?: boolean;
}

const BODY_SLICE = 64 * 1024;

type SmtpError = Error & {
  code?: string;
  responseCode?: number;
  response?: string;
  command?: string;
  rejected?: string[];
  rejectedErrors?: SmtpError[];
};
/** What nodemailer's SMTP client reports of a transaction the server accepted. */
type SentInfo = { accepted?: string[]; rejected?: string[]; rejectedErrors?: SmtpError[]; response?: string };

/**
 * Outbound SMTP over nodemailer's SMTP client, on the connections of
 * SmtpPool. Every answer becomes an outcome value; nothing here throws for
 * a server's or the network's behaviour.
 */
export class SmtpSender {
  private readonly pool: SmtpPool;

  constructor(o: SenderOptions) {
    this.pool = new SmtpPool(o);
  }

  async send(destinations: Destination[], req: SendRequest): Promise<SendResult> {
    let failure = 'no destination to try';
    // what a server said while the connection was being set up (banner, EHLO), if it said anything
    let refusal: string | null = null;
    let lastHost = destinations[0]?.servername ?? destinations[0]?.host ?? '';
    for (const dest of destinations) {
      lastHost = dest.servername ?? dest.host;
      // A reused connection may have been closed by the server while idle; that is found out
      // before anything is sent, so one more try on a fresh connection is safe.
      for (let fresh = false; ; fresh = true) {
        let conn: Conn;
        try {
          conn = await this.pool.acquire(dest, fresh);
        } catch (e) {
          failure = describe(e as SmtpError);
          // an MTA-STS or DANE policy that refused the session says why, as a 4.7.5 reply: deferred
          refusal = e instanceof TlsPolicyError ? e.reply : serverReply(e as SmtpError);
          break;
        }
        if (req.mayStart && !req.mayStart()) {
          this.pool.release(dest, conn, true, false);
          return { recipients: [], host: lastHost, secure: false, dataStarted: false, withdrawn: true };
        }
        const r = await this.transact(conn, dest, req);
        if (r === 'stale' && !fresh) continue;
        if (r === 'stale') {
          failure = 'the connection closed before the transaction';
          break;
        }
        return r;
      }
    }
    // A refusal at connect (a 421 or a 554 banner, EHLO refused) is about the connection, not the
    // recipients: they are deferred, never bounced for it, and the reply is kept as the server gave it.
    return {
      recipients: req.envelope.to.map((address) => ({
        address,
        ...(refusal ? ({ kind: 'deferred', reply: refusal } as const) : classifyNoReply(failure, false)),
      })),
      host: lastHost,
      secure: false,
      dataStarted: false,
    };
  }

  /** One SMTP transaction on an open connection. */
  private transact(conn: Conn, d: Destination, req: SendRequest): Promise<SendResult | 'stale'> {
    const host = d.servername ?? d.host;
    const marked = Promise.resolve().then(() => req.beforeData?.());
    // a failed mark is reported through the body stream, if the transaction gets that far
    marked.catch(() => undefined);
    const body = new BodyStream(req.raw, marked);
    return new Promise((resolve) => {
      conn.send(
        { from: req.envelope.from, to: req.envelope.to },
        body.stream,
        (err: SmtpError | null, info?: SentInfo) => {
          const secure = Boolean((conn as unknown as { secure?: boolean }).secure);
          const { dataStarted } = body;
          if (!err) {
            this.pool.release(d, conn, true);
            return resolve({
              recipients: outcomesOfAccept(info, req.envelope.to),
              host,
              secure,
              ...(info?.response ? { response: info.response } : {}),
              dataStarted,
            });
          }
          const wasReused =
            conn.posthornDead !== true &&
            !dataStarted &&
            !err.responseCode &&
            (err.code === 'ECONNECTION' || err.code === 'EPROTOCOL') &&
            err.command !== 'DATA';
          this.pool.release(d, conn, false);
          if (wasReused && isStale(err)) return resolve('stale');
          resolve({ recipients: outcomesOfError(err, req.envelope.to, body.ended), host, secure, dataStarted });
        },
      );
    });
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/**
 * The message body, handed over in slices as the connection drains (so that 'end' means the
 * socket took the body), and only once `marked` has resolved.
 */
class BodyStream {
  readonly stream: Readable;
  /** whether the connection began reading the body */
  dataStarted = false;
  // Whether the whole body was handed to the connection, after which only the final "." is
  // missing. A connection lost before that cannot have delivered the message (the server never
  // saw its end), so it is retried; after it, the outcome is unknown (ambiguous).
  ended = false;
  private offset = 0;

  constructor(
    private readonly raw: Buffer,
    marked: Promise<void>,
  ) {
    this.stream = new Readable({ read: () => this.onRead(marked) });
    this.stream.once('end', () => {
      this.ended = true;
    });
  }

  private onRead(marked: Promise<void>): void {
    if (this.dataStarted) {
      if (this.offset > 0 && this.offset < this.raw.length) this.pushSlice();
      return;
    }
    this.dataStarted = true;
    // The message waits here until the store has recorded that it is going out.
    marked.then(
      () => (this.raw.length ? this.pushSlice() : this.stream.push(null)),
      (e: unknown) => this.stream.destroy(e as Error),
    );
  }

  private pushSlice(): void {
    const next = Math.min(this.raw.length, this.offset + BODY_SLICE);
    this.stream.push(this.raw.subarray(this.offset, next));
    this.offset = next;
    if (this.offset >= this.raw.length) this.stream.push(null);
  }
}

/** The connection was found closed before anything of this transaction was accepted. */
function isStale(err: SmtpError): boolean {
  return err.code === 'ECONNECTION' && (err.command === 'API' || err.command === 'CONN' || err.command === 'MAIL FROM');
}

/** A transaction the server accepted: each recipient's reply to RCPT if it was refused, else the reply to DATA. */
function outcomesOfAccept(info: SentInfo | undefined, to: string[]): RecipientResult[] {
  const rejected = new Map(
    (info?.rejectedErrors ?? []).map((e) => [String((e as { recipient?: string }).recipient ?? ''), e]),
  );
  return to.map((address): RecipientResult => {
    const r = rejected.get(address);
    return r
      ? { address, ...classifyReply(r.responseCode ?? 550, r.response ?? r.message, 'RCPT TO') }
      : { address, ...classifyReply(250, info?.response ?? '250 OK') };
  });
}

function outcomesOfError(err: SmtpError, to: string[], bodyEnded: boolean): RecipientResult[] {
  // RCPT rejections: each recipient has its own reply (nodemailer gives them when none was accepted).
  if (err.rejectedErrors?.length) {
    const byRcpt = new Map(err.rejectedErrors.map((e) => [String((e as { recipient?: string }).recipient ?? ''), e]));
    return to.map((address) => {
      const e = byRcpt.get(address) ?? err;
      return {
        address,
        ...(e.responseCode
          ? classifyReply(e.responseCode, e.response ?? e.message, e === err ? err.command : 'RCPT TO')
          : classifyNoReply(describe(e), bodyEnded)),
      };
    });
  }
  const c = err.responseCode
    ? // the command tells what a refusal was of: "550 no such user" to RCPT is the address, after DATA a filter's
      classifyReply(err.responseCode, err.response ?? err.message, err.command)
    : classifyNoReply(describe(err), bodyEnded);
  return to.map((address) => ({ address, ...c }));
}

/** The server's own reply carried by an error, when the error is one (a refused greeting or EHLO). */
function serverReply(e: SmtpError): string | null {
  const reply = e.response?.trim();
  return reply && /^[45]\d\d\b/.test(reply) && (e.command === 'CONN' || e.command === 'EHLO' || e.command === 'HELO')
    ? reply
    : null;
}

function describe(e: SmtpError): string {
  return [e.code, e.message].filter(Boolean).join(': ');
}

/** The relay's queue id from its reply to DATA: "250 2.0.0 Ok: queued as 4FhX1", Exim's "id=…", or the last token. */
export function providerQueueId(response: string): string | null {
  const text = response.trim();
  const m =
    /queued as ([A-Za-z0-9._@<>-]+)/i.exec(text) ??
    /\bid=([A-Za-z0-9._@<>-]+)/i.exec(text) ??
    /\b([A-Za-z0-9._-]+) Message accepted for delivery/i.exec(text);
  if (m) return m[1].replace(/^<|>$/g, '');
  const last = /^2\d\d(?:[ -]\d\.\d{1,3}\.\d{1,3})?\s+(?:\S+\s+)*?(\S+)$/.exec(text)?.[1];
  return last && /[0-9]/.test(last) ? last.replace(/^<|>$/g, '') : null;
}
