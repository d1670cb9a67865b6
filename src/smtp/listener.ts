import { readFileSync } from 'node:fs';
import { smtpSessions } from '../log/metrics.js';
import type { AddressInfo, Server, Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import type { Logger } from '../log/logger.js';

/** What both listeners share: where, TLS, limits, who resolves client names. */
export interface ListenerOptions {
  name: string;
  host: string;
  port: number;
  /** PEM files (smtp.tls); STARTTLS is offered when both are set */
  tls: { key: string | null; cert: string | null };
  /** SIZE (RFC 1870): larger messages are refused with 552 */
  maxBytes: number;
  maxClients: number;
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

/**
 * One smtp-server with the appliance's defaults: no reverse lookup outside
 * dns.resolvers, bounded clients, time and size, STARTTLS only with a
 * configured certificate, no banner details.
 */
export async function listen(o: ListenerOptions, handlers: Partial<SMTPServerOptions>): Promise<Listener> {
  const tls = o.tls.key && o.tls.cert ? { key: readFileSync(o.tls.key), cert: readFileSync(o.tls.cert) } : null;
  const server = new SMTPServer({
    name: undefined,
    banner: `Posthorn ${o.name}`,
    secure: false,
    ...(tls ?? {}),
    disabledCommands: tls ? [] : ['STARTTLS'],
    size: o.maxBytes,
    maxClients: o.maxClients,
    socketTimeout: 60_000,
    closeTimeout: 30_000,
    logger: false,
    disableReverseLookup: o.reverse === null,
    ...(o.reverse ? { resolver: { reverse: (ip: string, cb: (err: Error | null, names?: string[]) => void) => void o.reverse!(ip).then((n) => cb(null, n), (e: Error) => cb(e)) } } : {}),
    ...handlers,
  } as SMTPServerOptions);
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
  const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port;
  o.logger.info({ listener: o.name, host: o.host, port, starttls: !!tls }, 'SMTP listener started');
  return {
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
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
  socket.write = ((...args: unknown[]) => {
    if (!corked) {
      corked = true;
      socket.cork();
      setImmediate(flush);
    }
    const ok = write(...args);
    // a 220 leaves at once: the greeting, and "ready to start TLS", after which the socket is handed to TLS
    if (typeof args[0] === 'string' && args[0].startsWith('220')) flush();
    return ok;
  }) as Socket['write'];
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
export function isLoopback(address: string): boolean {
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}
