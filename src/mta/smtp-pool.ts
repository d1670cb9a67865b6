import SMTPConnection from 'nodemailer/lib/smtp-connection';
import type { Logger } from '../log/logger.js';

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

export type Conn = SMTPConnection & { posthornDead?: boolean; posthornIdleTimer?: NodeJS.Timeout };

interface Pool {
  idle: Conn[];
  open: number;
  waiters: Array<() => void>;
}

/**
 * A small pool of SMTP connections per destination: at most
 * maxConnectionsPerDestination open, idle ones reused for the next message
 * and closed after idleMs.
 */
export class SmtpPool {
  private readonly pools = new Map<string, Pool>();
  private closed = false;

  constructor(private readonly o: SenderOptions) {}

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

  async acquire(d: Destination, fresh: boolean): Promise<Conn> {
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

  release(d: Destination, conn: Conn | null, reusable = false): void {
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

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.pools.values()) {
      for (const c of p.idle.splice(0)) c.close();
      for (const w of p.waiters.splice(0)) w();
    }
  }
}
