import { readFileSync } from 'node:fs';
import type { AddressInfo, Server, Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import type { SmtpLimits } from '../config/config.js';
import { ApiError } from '../lib/errors.js';
import { isInputRefused } from '../lib/input-refused.js';
import { isLoopbackAddress } from '../lib/self-signed.js';
import { isStorageRefusal } from '../lib/storage-full.js';
import type { Logger } from '../log/logger.js';
import { smtpSessions } from '../log/metrics.js';
import { SessionLimits } from './session-limits.js';

/** What both listeners share: where, TLS, limits, who resolves client names. */
export interface ListenerOptions {
  name: string;
  host: string;
  port: number;
  /** outbound.hostname: the name of the greeting and of the EHLO reply */
  hostname: string;
  /** PEM files (smtp.tls, or the self-signed pair withCertificate gives); STARTTLS is offered when both are set */
  tls: { key: string | null; cert: string | null };
  /** implicit TLS (RFC 8314: smtp.submission.secure) */
  secure?: boolean;
  /** where a listener without smtp.tls keeps its self-signed certificate (self-signed-tls.ts) */
  dataDir: string;
  /** SIZE (RFC 1870): larger messages are refused with 552 */
  maxBytes: number;
  maxClients: number;
  /** smtp.max_clients_per_ip, session_timeout, data_timeout, min_data_rate, hard_error_limit */
  limits: SmtpLimits;
  /** how long a DATA transfer runs before limits.minDataRate holds (30 s) */
  minRateGraceMs?: number;
  /** clients that may authenticate without TLS (isLoopback); tests turn the exemption off */
  trustedAddress?: (address: string) => boolean;
  /** reverse DNS of clients through dns.resolvers, or off (null) */
  reverse: ((ip: string) => Promise<string[]>) | null;
  logger: Logger;
}

export interface Listener {
  port: number;
  close(): Promise<void>;
}

/** An SMTP error reply: smtp-server answers with its responseCode and message. */
export function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

/** A DATA transfer is first held to smtp.min_data_rate once it has run this long. */
export const MIN_RATE_GRACE_MS = 30_000;

/**
 * One smtp-server with the appliance's defaults: no reverse lookup outside
 * dns.resolvers, bounded clients, time and size (session-limits.ts),
 * STARTTLS only with a certificate, outbound.hostname as its name and no
 * banner details.
 */
export async function listen(o: ListenerOptions, handlers: Partial<SMTPServerOptions>): Promise<Listener> {
  const tls = o.tls.key && o.tls.cert ? { key: readFileSync(o.tls.key), cert: readFileSync(o.tls.cert) } : null;
  if (o.secure && !tls) throw new Error(`the ${o.name} listener is set to implicit TLS but has no certificate`);
  let limits: SessionLimits | null = null;
  const server = new SMTPServer({
    name: o.hostname,
    banner: `Posthorn ${o.name}`,
    secure: !!o.secure,
    ...(tls ?? {}),
    disabledCommands: tls ? [] : ['STARTTLS'],
    size: o.maxBytes,
    maxClients: o.maxClients,
    socketTimeout: 60_000,
    closeTimeout: 30_000,
    logger: false,
    disableReverseLookup: o.reverse === null,
    ...(o.reverse
      ? {
          resolver: {
            reverse: (ip: string, cb: (err: Error | null, names?: string[]) => void) =>
              void o.reverse!(ip).then(
                (n) => cb(null, n),
                (e: Error) => cb(e),
              ),
          },
        }
      : {}),
    ...handlers,
    ...limitedHandlers(handlers, () => limits!),
  });
  limits = new SessionLimits(server, {
    listener: o.name,
    limits: o.limits,
    minRateGraceMs: o.minRateGraceMs ?? MIN_RATE_GRACE_MS,
    logger: o.logger,
  });
  server.on('error', (e) => o.logger.warn({ err: e, listener: o.name }, 'SMTP listener error'));
  (server as unknown as { server: Server }).server.on('connection', (socket: Socket) => {
    coalesceReplies(socket);
    smtpSessions.inc({ listener: o.name });
    socket.once('close', () => smtpSessions.dec({ listener: o.name }));
  });
  await new Promise<void>((resolve, reject) => {
    const onError = (e: Error) => reject(e);
    (server as unknown as { server: { once(ev: string, fn: (e: Error) => void): void } }).server.once('error', onError);
    server.listen(o.port, o.host, () => resolve());
  });
  const port = (server as unknown as { server: { address(): AddressInfo } }).server.address().port;
  o.logger.info(
    { listener: o.name, host: o.host, port, starttls: !!tls && !o.secure, implicitTls: !!o.secure },
    'SMTP listener started',
  );
  return {
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The handlers under the session limits: admission and release around each session, and each answer the client waits on. */
function limitedHandlers(h: Partial<SMTPServerOptions>, limits: () => SessionLimits): Partial<SMTPServerOptions> {
  return {
    onConnect(session, cb) {
      const refused = limits().admit(session);
      if (refused) return cb(smtpError(421, refused));
      if (h.onConnect) h.onConnect(session, cb);
      else cb();
    },
    onClose(session, cb) {
      limits().release(session);
      h.onClose?.(session, cb);
    },
    ...(h.onAuth ? { onAuth: (auth, session, cb) => h.onAuth!(auth, session, limits().answering(session, cb)) } : {}),
    ...(h.onMailFrom
      ? { onMailFrom: (address, session, cb) => h.onMailFrom!(address, session, limits().answering(session, cb)) }
      : {}),
    onRcptTo(address, session, cb) {
      const answer = limits().recipient(session, cb);
      if (h.onRcptTo) h.onRcptTo(address, session, answer);
      else answer();
    },
    ...(h.onData
      ? {
          onData: (stream: SMTPServerDataStream, session: SMTPServerSession, cb) =>
            h.onData!(stream, session, limits().message(session, stream, cb)),
        }
      : {}),
  };
}

/**
 * Replies written in one turn of the event loop leave in one write: a client
 * that pipelines (RFC 2920) sends MAIL, RCPT and DATA together, and
 * smtp-server answers each with its own write, a system call each, which
 * on loopback cost the listener more than its own handling of a command.
 * The order and the content of the replies are unchanged.
 */
function coalesceReplies(socket: Socket): void {
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  let corked = false;
  const flush = () => {
    if (!corked) return;
    corked = false;
    socket.uncork();
  };
  socket.write = (...args: unknown[]) => {
    if (!corked) {
      corked = true;
      socket.cork();
      setImmediate(flush);
    }
    const ok = write(...args);
    // a 220 leaves at once: the greeting, and "ready to start TLS", after which the socket is handed to TLS
    if (typeof args[0] === 'string' && args[0].startsWith('220')) flush();
    return ok;
  };
}

/**
 * The message of a DATA command, whole, or null when it went over SIZE
 * (smtp-server marks the stream; the caller answers 552).
 */
export function readData(stream: Readable & { sizeExceeded?: boolean }): Promise<Buffer | null> {
  // events, not an async iterator: the iterator's promise per chunk showed in the listeners' profile
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.once('error', reject);
    stream.once('end', () => resolve(stream.sizeExceeded ? null : Buffer.concat(chunks)));
  });
}

/** Loopback clients may authenticate without TLS (CONTRACT §5). */
export const isLoopback = isLoopbackAddress;

/**
 * The answer to a message that broke a parser's limit (InputRefused: the
 * message's fault, refused for good) or found the disk full (the sender
 * keeps it and tries again); null for any other failure.
 */
export function refusalOf(e: unknown): Error | null {
  if (isInputRefused(e)) return smtpError(554, `5.6.0 ${e.message.replace(/[\r\n]+/g, ' ')}`);
  if (isStorageRefusal(e)) return smtpError(452, '4.3.1 insufficient system storage, try again later');
  return null;
}

/** smtp-server ends the message stream with this when the client went away in the middle: nobody is left to tell. */
const clientGone = (e: unknown) => (e as { code?: unknown } | null)?.code === 'ECONNECTION';

/** How often at most a full disk is logged: every message would say it again. */
const STORAGE_FULL_LOG_MS = 60_000;

/**
 * Logs why a message was not taken, once and as it deserves: a parser's
 * limit at warn without a stack ({limit}), a full disk at error at most once
 * a minute, a refusal the client is told (ApiError) not at all, anything
 * else at error.
 */
export function failureLogger(
  o: Pick<ListenerOptions, 'name' | 'logger'>,
  now: () => number = Date.now,
): (e: unknown) => void {
  let storageLoggedAt = -Infinity;
  return (e) => {
    if (clientGone(e)) return;
    if (isInputRefused(e))
      return o.logger.warn({ listener: o.name, limit: e.limit }, `a message was refused: ${e.message}`);
    if (isStorageRefusal(e)) {
      if (now() - storageLoggedAt < STORAGE_FULL_LOG_MS) return;
      storageLoggedAt = now();
      return o.logger.error(
        { listener: o.name, code: (e as { code?: unknown }).code },
        'the disk is full: messages are answered 452 4.3.1 until there is room (logged at most once a minute)',
      );
    }
    if (e instanceof ApiError) return;
    o.logger.error({ err: e, listener: o.name }, 'a message could not be stored');
  };
}
