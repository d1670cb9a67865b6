import { Readable } from 'node:stream';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import type { Logger } from '../log/logger.js';
import { classifyNoReply, classifyReply, type Classified } from './classify.js';

export interface Destination {
  /** address to connect to (an IP from our own DNS lookup, or a relay host name) */
  host: string;
  /** name for TLS SNI and logs (the MX name) */
  servername?: string;
  port: number;
  /** implicit TLS (relay on 465) */
  secure?: boolean;
  auth?: { user: string; pass: string };
  /** enforced: deliver only over TLS (the domain's `tls` setting) */
  tls: 'opportunistic' | 'enforced';
  /** check the server certificate (relays); MX delivery is opportunistic (RFC 7435) */
  verifyCertificate?: boolean;
}

export interface SendRequest {
  envelope: { from: string; to: string[] };
  raw: Buffer;
  /**
   * Called as the transaction begins; the first byte of the message body waits until it has
   * resolved (the queue records durably that the body may go out). Its commit runs while
   * MAIL, RCPT and DATA make their round trips instead of after them.
   */
  beforeData?: () => Promise<void>;
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
}

export interface SenderOptions {
  /** EHLO name (outbound.hostname) */
  hostname: string;
  maxConnectionsPerDestination: number;
  connectTimeoutMs?: number;
  socketTimeoutMs?: number;
  idleMs?: number;
  logger?: Logger;
  /** extra trusted CA, for relays with a private CA */
  ca?: string | Buffer;
}

const BODY_SLICE = 64 * 1024;

type Conn = SMTPConnection & { posthornDead?: boolean; posthornIdleTimer?: NodeJS.Timeout };

interface Pool {
  idle: Conn[];
  open: number;
  waiters: Array<() => void>;
}

type SmtpError = Error & { code?: string; responseCode?: number; response?: string; command?: string; rejected?: string[]; rejectedErrors?: SmtpError[] };

/**
 * Outbound SMTP over nodemailer's SMTP client, with a small pool per
 * destination: at most N connections, idle ones reused for the next
 * message. Every answer becomes an outcome value; nothing here throws for
 * a server's or the network's behaviour.
 */
export class SmtpSender {
  private readonly pools = new Map<string, Pool>();
  private closed = false;

  constructor(private readonly o: SenderOptions) {}

  async send(destinations: Destination[], req: SendRequest): Promise<SendResult> {
    let failure = 'no destination to try';
    let lastHost = destinations[0]?.servername ?? destinations[0]?.host ?? '';
    for (const dest of destinations) {
      lastHost = dest.servername ?? dest.host;
      // A reused connection may have been closed by the server while idle; that is found out
      // before anything is sent, so one more try on a fresh connection is safe.
      for (let fresh = false; ; fresh = true) {
        let conn: Conn;
        try {
          conn = await this.acquire(dest, fresh);
        } catch (e) {
          failure = describe(e as SmtpError);
          break;
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
    return { recipients: req.envelope.to.map((address) => ({ address, ...classifyNoReply(failure, false) })), host: lastHost, secure: false, dataStarted: false };
  }

  private key(d: Destination): string {
    return [d.host, d.port, d.secure ? 's' : '', d.tls, d.auth?.user ?? ''].join('|');
  }

  private pool(d: Destination): Pool {
    const k = this.key(d);
    let p = this.pools.get(k);
    if (!p) {
      p = { idle: [], open: 0, waiters: [] };
      this.pools.set(k, p);
    }
    return p;
  }

  private async acquire(d: Destination, fresh: boolean): Promise<Conn> {
    const p = this.pool(d);
    for (;;) {
      if (this.closed) throw new Error('the sender is closed');
      if (!fresh) {
        const idle = p.idle.pop();
        if (idle) clearTimeout(idle.posthornIdleTimer);
        if (idle && !idle.posthornDead) return idle;
        if (idle) continue;
      }
      if (p.open < this.o.maxConnectionsPerDestination) break;
      // A fresh connection is wanted but the pool is full: give up an idle one for it.
      if (fresh && p.idle.length) {
        this.discard(d, p.idle.pop()!);
        continue;
      }
      await new Promise<void>((resolve) => p.waiters.push(resolve));
    }
    p.open++;
    try {
      return await this.connect(d);
    } catch (e) {
      this.release(d, null);
      throw e;
    }
  }

  private connect(d: Destination): Promise<Conn> {
    const conn = new SMTPConnection({
      host: d.host,
      port: d.port,
      secure: d.secure ?? false,
      name: this.o.hostname,
      requireTLS: d.tls === 'enforced',
      opportunisticTLS: true,
      connectionTimeout: this.o.connectTimeoutMs ?? 30_000,
      greetingTimeout: this.o.connectTimeoutMs ?? 30_000,
      socketTimeout: this.o.socketTimeoutMs ?? 5 * 60_000,
      tls: {
        ...(d.servername ? { servername: d.servername } : {}),
        rejectUnauthorized: d.verifyCertificate ?? false,
        ...(this.o.ca ? { ca: this.o.ca } : {}),
      },
    }) as Conn;
    // A connection that dies while idle reports here; it must never become an unhandled 'error'.
    conn.on('error', (e: Error) => {
      conn.posthornDead = true;
      this.o.logger?.debug({ err: e, host: d.servername ?? d.host }, 'SMTP connection error');
    });
    conn.on('end', () => {
      conn.posthornDead = true;
      clearTimeout(conn.posthornIdleTimer);
    });
    return new Promise<Conn>((resolve, reject) => {
      let settled = false;
      const fail = (e: Error) => {
        if (settled) return;
        settled = true;
        conn.close();
        reject(e);
      };
      // Some failures while connecting (TLS required but not offered, a dropped greeting) are
      // reported as an 'error' event rather than through the connect callback.
      conn.once('error', fail);
      conn.connect((err?: Error | null) => {
        if (err) return fail(err);
        const ready = () => {
          if (settled) return;
          settled = true;
          conn.removeListener('error', fail);
          resolve(conn);
        };
        if (!d.auth) return ready();
        conn.login({ user: d.auth.user, pass: d.auth.pass }, (e?: Error | null) => (e ? fail(e) : ready()));
      });
    });
  }

  private release(d: Destination, conn: Conn | null, reusable = false): void {
    const p = this.pool(d);
    if (conn && reusable && !conn.posthornDead && !this.closed) {
      p.idle.push(conn);
      clearTimeout(conn.posthornIdleTimer);
      conn.posthornIdleTimer = setTimeout(() => {
        const i = p.idle.indexOf(conn);
        if (i >= 0) {
          p.idle.splice(i, 1);
          this.discard(d, conn);
        }
      }, this.o.idleMs ?? 30_000);
      conn.posthornIdleTimer.unref();
    } else {
      if (conn) conn.close();
      p.open--;
    }
    p.waiters.shift()?.();
  }

  private discard(d: Destination, conn: Conn): void {
    conn.posthornDead = true;
    try {
      conn.quit();
    } catch {
      conn.close();
    }
    const p = this.pool(d);
    p.open--;
    p.waiters.shift()?.();
  }

  /** One SMTP transaction on an open connection. */
  private transact(conn: Conn, d: Destination, req: SendRequest): Promise<SendResult | 'stale'> {
    const host = d.servername ?? d.host;
    const marked = Promise.resolve().then(() => req.beforeData?.());
    // a failed mark is reported through the body stream, if the transaction gets that far
    marked.catch(() => undefined);
    let dataStarted = false;
    // Whether the whole body was handed to the connection, after which only the final "." is
    // missing. A connection lost before that cannot have delivered the message (the server never
    // saw its end), so it is retried; after it, the outcome is unknown (ambiguous).
    let bodyEnded = false;
    // Handed over in slices as the connection drains, so that 'end' means the socket took the body.
    let offset = 0;
    const pushSlice = (stream: Readable) => {
      const next = Math.min(req.raw.length, offset + BODY_SLICE);
      stream.push(req.raw.subarray(offset, next));
      offset = next;
      if (offset >= req.raw.length) stream.push(null);
    };
    const body = new Readable({
      read() {
        if (dataStarted) {
          if (offset > 0 && offset < req.raw.length) pushSlice(this);
          return;
        }
        dataStarted = true;
        // The message waits here until the store has recorded that it is going out.
        marked.then(
          () => (req.raw.length ? pushSlice(this) : this.push(null)),
          (e: unknown) => this.destroy(e as Error),
        );
      },
    });
    body.once('end', () => {
      bodyEnded = true;
    });
    return new Promise((resolve) => {
      conn.send({ from: req.envelope.from, to: req.envelope.to }, body, (err: SmtpError | null, info?: { accepted?: string[]; rejected?: string[]; rejectedErrors?: SmtpError[]; response?: string }) => {
        const secure = Boolean((conn as unknown as { secure?: boolean }).secure);
        if (!err) {
          const rejected = new Map((info?.rejectedErrors ?? []).map((e) => [String((e as { recipient?: string }).recipient ?? ''), e]));
          const recipients = req.envelope.to.map((address): RecipientResult => {
            const r = rejected.get(address);
            return r ? { address, ...classifyReply(r.responseCode ?? 550, r.response ?? r.message) } : { address, ...classifyReply(250, info?.response ?? '250 OK') };
          });
          this.release(d, conn, true);
          return resolve({ recipients, host, secure, ...(info?.response ? { response: info.response } : {}), dataStarted });
        }
        const wasReused = conn.posthornDead !== true && !dataStarted && !err.responseCode && (err.code === 'ECONNECTION' || err.code === 'EPROTOCOL') && err.command !== 'DATA';
        this.release(d, conn, false);
        if (wasReused && isStale(err)) return resolve('stale');
        resolve({ recipients: outcomesOfError(err, req.envelope.to, bodyEnded), host, secure, dataStarted });
      });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.pools.values()) {
      for (const c of p.idle.splice(0)) c.close();
      for (const w of p.waiters.splice(0)) w();
    }
  }
}

/** The connection was found closed before anything of this transaction was accepted. */
function isStale(err: SmtpError): boolean {
  return err.code === 'ECONNECTION' && (err.command === 'API' || err.command === 'CONN' || err.command === 'MAIL FROM');
}

function outcomesOfError(err: SmtpError, to: string[], bodyEnded: boolean): RecipientResult[] {
  // RCPT rejections: each recipient has its own reply (nodemailer gives them when none was accepted).
  if (err.rejectedErrors?.length) {
    const byRcpt = new Map(err.rejectedErrors.map((e) => [String((e as { recipient?: string }).recipient ?? ''), e]));
    return to.map((address) => {
      const e = byRcpt.get(address) ?? err;
      return { address, ...(e.responseCode ? classifyReply(e.responseCode, e.response ?? e.message) : classifyNoReply(describe(e), bodyEnded)) };
    });
  }
  const c = err.responseCode ? classifyReply(err.responseCode, err.response ?? err.message) : classifyNoReply(describe(err), bodyEnded);
  return to.map((address) => ({ address, ...c }));
}

function describe(e: SmtpError): string {
  return [e.code, e.message].filter(Boolean).join(': ');
}

/** The relay's queue id from its reply to DATA: "250 2.0.0 Ok: queued as 4FhX1", Exim's "id=…", or the last token. */
export function providerQueueId(response: string): string | null {
  const text = response.trim();
  const m = /queued as ([A-Za-z0-9._@<>-]+)/i.exec(text) ?? /\bid=([A-Za-z0-9._@<>-]+)/i.exec(text) ?? /\b([A-Za-z0-9._-]+) Message accepted for delivery/i.exec(text);
  if (m) return m[1]!.replace(/^<|>$/g, '');
  const last = /^2\d\d(?:[ -]\d\.\d{1,3}\.\d{1,3})?\s+(?:\S+\s+)*?(\S+)$/.exec(text)?.[1];
  return last && /[0-9]/.test(last) ? last.replace(/^<|>$/g, '') : null;
}
