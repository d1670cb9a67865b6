import { createSecureContext, rootCertificates, type ConnectionOptions, type SecureContext } from 'node:tls';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import type { Logger } from '../log/logger.js';
import type { Tlsa } from './tls-policy/dane.js';
import { checkSession, policyFailure, type TlsPolicyRef, type TlsSessionRecorder } from './tls-policy/tls-session.js';

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
  /** check the server certificate (relays, MTA-STS enforce); MX delivery is otherwise opportunistic (RFC 7435) */
  verifyCertificate?: boolean;
  /** DANE (RFC 7672): the MX host's DNSSEC-validated TLSA records, checked after STARTTLS (tls is enforced) */
  dane?: Tlsa[];
  /** the MTA-STS or DANE policy the destination is used under: the replies of its failures, TLS-RPT */
  policy?: TlsPolicyRef;
  /** the source address to bind (outbound.ips); the system picks one when absent */
  localAddress?: string;
  /** the EHLO name said from it (outbound.hostname when absent) */
  ehlo?: string;
  /** traffic shaping: the connections of every destination of one (provider, source IP) share its limits */
  lane?: { key: string; maxConnections: number; maxMessagesPerConnection: number | null };
}

export interface SenderOptions {
  /** EHLO name (outbound.hostname) */
  hostname: string;
  maxConnectionsPerDestination: number;
  connectTimeoutMs?: number;
  socketTimeoutMs?: number;
  idleMs?: number;
  logger?: Logger;
  /** extra trusted CA besides the system's (outbound.ca_file): relays, MTA-STS and MX hosts with a private CA */
  ca?: string | Buffer;
  /** TLS-RPT (RFC 8460): every session under an MTA-STS or DANE policy, and how it went */
  tlsReport?: TlsSessionRecorder;
}

export type Conn = SMTPConnection & {
  posthornDead?: boolean;
  posthornIdleTimer?: NodeJS.Timeout;
  /** transactions done on it */
  posthornSent?: number;
};

/** Connections that may be open at once: those of one destination, or of every destination of a lane. */
interface Slots {
  open: number;
  max: number;
  waiters: Array<() => void>;
  pools: Set<Pool>;
}

interface Pool {
  idle: Conn[];
  slots: Slots;
}

/**
 * A small pool of SMTP connections per destination (and source address):
 * idle ones reused for the next message and closed after idleMs. At most
 * maxConnectionsPerDestination open per destination, or, for a destination
 * of a shaping lane, at most the lane's maxConnections across all its
 * destinations: a provider's many MX hosts count as one.
 */
export class SmtpPool {
  private readonly pools = new Map<string, Pool>();
  private readonly lanes = new Map<string, Slots>();
  private closed = false;
  // Node's roots plus the extra CA, made once: a `ca` option would replace the roots, and parse
  // them again at every handshake
  private readonly trusted: SecureContext | null;

  constructor(private readonly o: SenderOptions) {
    this.trusted = o.ca ? createSecureContext({ ca: [...rootCertificates, o.ca.toString()] }) : null;
  }

  private key(d: Destination): string {
    return [
      d.host,
      d.port,
      d.secure ? 's' : '',
      d.tls,
      d.auth?.user ?? '',
      d.localAddress ?? '',
      d.lane?.key ?? '',
      // a connection checked under one policy is not reused under another
      d.verifyCertificate ? 'pkix' : '',
      d.dane ? `dane:${d.dane.map((t) => t.data.toString('hex')).join(',')}` : '',
    ].join('|');
  }

  private pool(d: Destination): Pool {
    const k = this.key(d);
    let p = this.pools.get(k);
    if (!p) {
      p = { idle: [], slots: this.slotsOf(d) };
      p.slots.pools.add(p);
      this.pools.set(k, p);
    }
    return p;
  }

  private slotsOf(d: Destination): Slots {
    if (!d.lane) return { open: 0, max: this.o.maxConnectionsPerDestination, waiters: [], pools: new Set() };
    let s = this.lanes.get(d.lane.key);
    if (!s) {
      s = { open: 0, max: d.lane.maxConnections, waiters: [], pools: new Set() };
      this.lanes.set(d.lane.key, s);
    }
    return s;
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
      if (p.slots.open < p.slots.max) break;
      // No room: give up an idle connection for a new one (this destination's when a fresh one is
      // wanted, else one of another destination of the lane).
      const victim = fresh && p.idle.length ? p : [...p.slots.pools].find((q) => q !== p && q.idle.length);
      if (victim) {
        const conn = victim.idle.pop()!;
        clearTimeout(conn.posthornIdleTimer);
        this.discard(victim, conn);
        continue;
      }
      await new Promise<void>((resolve) => p.slots.waiters.push(resolve));
    }
    p.slots.open++;
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
      name: d.ehlo ?? this.o.hostname,
      ...(d.localAddress ? { localAddress: d.localAddress } : {}),
      requireTLS: d.tls === 'enforced',
      opportunisticTLS: true,
      connectionTimeout: this.o.connectTimeoutMs ?? 30_000,
      greetingTimeout: this.o.connectTimeoutMs ?? 30_000,
      socketTimeout: this.o.socketTimeoutMs ?? 5 * 60_000,
      tls: this.tlsOptions(d),
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
        const error = d.policy ? policyFailure(d, conn, e, this.o.tlsReport) : e;
        conn.close();
        reject(error);
      };
      // Some failures while connecting (TLS required but not offered, a dropped greeting) are
      // reported as an 'error' event rather than through the connect callback.
      conn.once('error', fail);
      conn.connect((err?: Error | null) => {
        if (err) return fail(err);
        // after STARTTLS and EHLO, before MAIL FROM: what the destination's MTA-STS or DANE policy says of the session
        const refused = d.policy ? checkSession(d, conn, this.o.tlsReport) : null;
        if (refused) return fail(refused);
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

  private tlsOptions(d: Destination): ConnectionOptions {
    return {
      // SNI with the MX name (RFC 7672 §8.1), which PKIX checks the certificate against (RFC 8461 §4.2)
      ...(d.servername ? { servername: d.servername } : {}),
      // DANE checks the certificate itself once STARTTLS is done: DANE-EE certificates are often
      // self-signed, and their names and dates do not count (RFC 7672 §3.1.1)
      rejectUnauthorized: (d.verifyCertificate ?? false) && !d.dane,
      ...(this.trusted ? { secureContext: this.trusted } : {}),
    };
  }

  /** `sent`: a transaction was done on the connection (it counts toward the lane's messages per connection) */
  release(d: Destination, conn: Conn | null, reusable = false, sent = true): void {
    const p = this.pool(d);
    if (conn && reusable && sent) conn.posthornSent = (conn.posthornSent ?? 0) + 1;
    const cap = d.lane?.maxMessagesPerConnection ?? null;
    if (conn && reusable && !conn.posthornDead && !this.closed && (cap === null || (conn.posthornSent ?? 0) < cap)) {
      p.idle.push(conn);
      clearTimeout(conn.posthornIdleTimer);
      conn.posthornIdleTimer = setTimeout(() => {
        const i = p.idle.indexOf(conn);
        if (i >= 0) {
          p.idle.splice(i, 1);
          this.discard(p, conn);
        }
      }, this.o.idleMs ?? 30_000);
      conn.posthornIdleTimer.unref();
    } else {
      // a connection at its lane's messages-per-connection cap says goodbye with QUIT
      if (conn && reusable && !conn.posthornDead && !this.closed) return this.discard(p, conn);
      if (conn) conn.close();
      p.slots.open--;
    }
    p.slots.waiters.shift()?.();
  }

  /**
   * Closes a connection with QUIT. Its slot is free once the connection has ended (a second at
   * most): the receiver counts a connection until then, and a lane's limit is what it sees.
   */
  private discard(p: Pool, conn: Conn): void {
    let freed = false;
    const free = () => {
      if (freed) return;
      freed = true;
      p.slots.open--;
      p.slots.waiters.shift()?.();
    };
    if (conn.posthornDead) free();
    else {
      conn.once('end', free);
      setTimeout(free, 1000).unref();
    }
    conn.posthornDead = true;
    try {
      conn.quit();
    } catch {
      conn.close();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.pools.values()) {
      for (const c of p.idle.splice(0)) c.close();
      for (const w of p.slots.waiters.splice(0)) w();
    }
  }
}
