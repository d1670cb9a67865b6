import type { SMTPServer, SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import type { SmtpLimits } from '../config/config.js';
import { clientKey } from '../lib/rate-limiter.js';
import type { Logger } from '../log/logger.js';
import { smtpDrops } from '../log/metrics.js';

/** The limits a session can be dropped by (the `limit` label of posthorn_smtp_sessions_dropped_total). */
export type DropLimit =
  'session_timeout' | 'data_timeout' | 'min_data_rate' | 'hard_error_limit' | 'clients_per_ip' | 'auth_failures';

type Connection = SMTPServer['connections'] extends Set<infer C> ? C : never;
type Reply = (err?: Error | null, ...rest: never[]) => void;

interface Session {
  conn: Connection;
  /** the client's address as the per-client cap counts it (an IPv6 client by its /64) */
  client: string;
  address: string;
  /** refused recipients and bad commands since the last message taken (Postfix smtpd_hard_error_limit) */
  errors: number;
  /** handlers of ours the client waits on: a deadline that passes meanwhile drops the session after their answer */
  busy: number;
  due: { limit: DropLimit; text: string } | null;
  dropped: boolean;
  timers: Set<NodeJS.Timeout>;
  /** smtp-server's own send, under the wrapper that counts bad commands */
  send: Connection['send'];
}

export interface SessionLimitOptions {
  listener: string;
  limits: SmtpLimits;
  /** how long a DATA transfer runs before its rate is held to limits.minDataRate */
  minRateGraceMs: number;
  logger: Logger;
}

const TOO_MANY_ERRORS = '4.7.0 too many errors, closing connection';
/** The replies to a command the client should not have sent (RFC 5321 §4.2.3, RFC 4954 §6). */
const BAD_COMMAND = new Set([500, 501, 502, 503, 504, 530]);

/**
 * What smtp-server leaves to its idle timeout, which any byte restarts: a
 * session's total time, a DATA transfer's time and rate, its refused
 * recipients and bad commands, and how many sessions one client holds
 * (docs/security.md). Past one, the client is told `421` and the connection
 * closed (smtp-server closes on every 421 it sends), counted in
 * posthorn_smtp_sessions_dropped_total and logged once.
 */
export class SessionLimits {
  private readonly sessions = new WeakMap<SMTPServerSession, Session>();
  private readonly perClient = new Map<string, number>();

  constructor(
    private readonly server: SMTPServer,
    private readonly o: SessionLimitOptions,
  ) {}

  /** At onConnect: the refusal (421 text) when the client holds its share of connections already, else null. */
  admit(session: SMTPServerSession): string | null {
    const conn = [...this.server.connections].find((c) => c.session === session);
    if (!conn) return null;
    const client = clientKey(session.remoteAddress);
    const held = this.perClient.get(client) ?? 0;
    if (held >= this.o.limits.maxClientsPerIp) {
      this.count('clients_per_ip', session.remoteAddress);
      return '4.7.0 too many connections from your address';
    }
    this.perClient.set(client, held + 1);
    const s: Session = {
      conn,
      client,
      address: session.remoteAddress,
      errors: 0,
      busy: 0,
      due: null,
      dropped: false,
      timers: new Set(),
      send: conn.send.bind(conn),
    };
    this.sessions.set(session, s);
    conn.send = (code, data, context) => this.reply(s, session, code, data, context);
    const minutes = Math.round(this.o.limits.sessionTimeoutMs / 60_000);
    this.timer(
      s,
      setTimeout(
        () =>
          this.dropWhenIdle(
            s,
            'session_timeout',
            `4.4.2 session open longer than ${minutes ? `${minutes} min` : `${this.o.limits.sessionTimeoutMs / 1000} s`}, closing connection`,
          ),
        this.o.limits.sessionTimeoutMs,
      ),
    );
    return null;
  }

  /** At onClose: the client's share is given back. */
  release(session: SMTPServerSession): void {
    const s = this.sessions.get(session);
    if (!s) return;
    this.sessions.delete(session);
    for (const t of s.timers) clearTimeout(t);
    const held = (this.perClient.get(s.client) ?? 1) - 1;
    if (held > 0) this.perClient.set(s.client, held);
    else this.perClient.delete(s.client);
  }

  /** A handler's callback: until it is called the client waits on us, and no deadline cuts in. */
  answering<C extends Reply>(session: SMTPServerSession, cb: C): C {
    const s = this.sessions.get(session);
    if (!s) return cb;
    s.busy++;
    let answered = false;
    return ((...args: Parameters<C>) => {
      if (answered) return;
      answered = true;
      s.busy--;
      cb(...args);
      this.dropIfDue(s);
    }) as C;
  }

  /** onRcptTo's callback: a refusal (5xx) counts as an error; past limits.hardErrorLimit the answer is 421 instead. */
  recipient<C extends Reply>(session: SMTPServerSession, cb: C): C {
    const s = this.sessions.get(session);
    const answer = this.answering(session, cb);
    if (!s) return answer;
    return ((err?: Error | null) => {
      const code = (err as { responseCode?: number } | null | undefined)?.responseCode ?? 550;
      if (err && code >= 500 && ++s.errors > this.o.limits.hardErrorLimit) {
        this.note(s, 'hard_error_limit');
        return answer(Object.assign(new Error(TOO_MANY_ERRORS), { responseCode: 421 }));
      }
      answer(err);
    }) as C;
  }

  /**
   * A DATA transfer: held to limits.dataTimeoutMs in all and, once it has
   * run minRateGraceMs, to limits.minDataRate bytes a second on average.
   * The callback wrapped: the client waits on us from the message's end, and
   * a message taken starts the error count again.
   */
  message<C extends Reply>(session: SMTPServerSession, stream: SMTPServerDataStream, cb: C): C {
    const s = this.sessions.get(session);
    if (!s) return cb;
    const { dataTimeoutMs, minDataRate } = this.o.limits;
    const grace = this.o.minRateGraceMs;
    const started = Date.now();
    const watching: NodeJS.Timeout[] = [];
    const stopWatching = () => {
      for (const t of watching) {
        clearTimeout(t);
        s.timers.delete(t);
      }
    };
    watching.push(
      setTimeout(
        () =>
          this.drop(
            s,
            'data_timeout',
            `4.4.2 the message took longer than ${dataTimeoutMs / 1000} s, closing connection`,
          ),
        dataTimeoutMs,
      ),
    );
    if (minDataRate > 0) {
      const check = () => {
        const ms = Date.now() - started;
        if (ms >= grace && stream.byteLength < (minDataRate * ms) / 1000)
          this.drop(
            s,
            'min_data_rate',
            `4.4.2 the message arrives slower than ${minDataRate} bytes a second, closing connection`,
          );
      };
      watching.push(setInterval(check, Math.min(1000, Math.max(100, grace))));
    }
    for (const t of watching) this.timer(s, t);
    let stage: 'arriving' | 'waiting' | 'answered' = 'arriving';
    stream.once('finish', () => {
      stopWatching();
      if (stage !== 'arriving') return;
      stage = 'waiting';
      s.busy++;
    });
    stream.once('close', stopWatching);
    return ((err?: Error | null, ...rest: never[]) => {
      if (stage === 'answered') return;
      if (stage === 'waiting') s.busy--;
      stage = 'answered';
      stopWatching();
      if (!err) s.errors = 0;
      cb(err, ...rest);
      this.dropIfDue(s);
    }) as C;
  }

  /**
   * Every reply goes through here: unknown commands, bad syntax or sequence
   * (500 to 504, smtp-server's own answers) and mail before AUTH (530)
   * count as errors, and past the limit the answer is 421. AUTH where this
   * session hides it (submission before TLS) is told why rather than "not
   * recognized".
   */
  private reply(
    s: Session,
    session: SMTPServerSession,
    code: number,
    data?: string | string[] | null,
    context?: string | false,
  ): void {
    if (s.dropped || !BAD_COMMAND.has(code)) return s.send(code, data, context);
    if (++s.errors > this.o.limits.hardErrorLimit) return this.drop(s, 'hard_error_limit', TOO_MANY_ERRORS);
    if (code === 500 && context === 'AUTH' && session.disabledCommands?.includes('AUTH'))
      return s.send(538, '5.7.11 encryption required: issue STARTTLS first', context);
    s.send(code, data, context);
  }

  private dropWhenIdle(s: Session, limit: DropLimit, text: string): void {
    if (s.busy > 0) s.due = { limit, text };
    else this.drop(s, limit, text);
  }

  private dropIfDue(s: Session): void {
    if (s.busy > 0 || !s.due) return;
    const { limit, text } = s.due;
    s.due = null;
    // after the answer the handler gave has left
    setImmediate(() => this.drop(s, limit, text));
  }

  private drop(s: Session, limit: DropLimit, text: string): void {
    if (s.dropped) return;
    this.note(s, limit);
    s.send(421, text);
  }

  private note(s: Session, limit: DropLimit): void {
    s.dropped = true;
    for (const t of s.timers) clearTimeout(t);
    this.count(limit, s.address);
  }

  private count(limit: DropLimit, client: string): void {
    smtpDrops.inc({ listener: this.o.listener, limit });
    this.o.logger.info({ listener: this.o.listener, limit, client }, `SMTP session dropped: ${limit}`);
  }

  private timer(s: Session, t: NodeJS.Timeout): void {
    t.unref();
    s.timers.add(t);
  }
}
