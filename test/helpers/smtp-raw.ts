// An SMTP client that shows the listener's every reply as it is written, for the tests of what a
// client sees: the greeting, the EHLO lines, a 421 in the middle of DATA, the connection closing.
// A local address (127.0.0.2 is loopback too) makes another client; STARTTLS upgrades in place.
import { once } from 'node:events';
import { SmtpReplyReader } from './smtp-reply-reader.js';
import { connect, type Socket } from 'node:net';
import { connect as connectTls, type ConnectionOptions, type PeerCertificate, type TLSSocket } from 'node:tls';
import type { SmtpLimits } from '../../src/config/config.js';
import { silentLogger } from '../../src/log/logger.js';
import type { ListenerOptions } from '../../src/smtp/listener.js';

export class RawSmtp {
  private readonly replies = new SmtpReplyReader();
  private socket: Socket | TLSSocket;
  /** resolves once the listener has closed the connection */
  readonly closed: Promise<void>;
  private isClosed = false;
  greeting = '';

  private constructor(socket: Socket) {
    this.socket = socket;
    this.closed = new Promise((resolve) =>
      socket.once('close', () => ((this.isClosed = true), this.flushWaiting(), resolve())),
    );
    socket.on('error', () => undefined);
    this.listen(socket);
  }

  /** Connects and reads the greeting (a 421 too: the connection may close right after it). */
  static async open(port: number, o: { localAddress?: string; tls?: ConnectionOptions } = {}): Promise<RawSmtp> {
    const socket: Socket = o.tls
      ? connectTls({ host: '127.0.0.1', port, ...(o.localAddress ? { localAddress: o.localAddress } : {}), ...o.tls })
      : connect({ host: '127.0.0.1', port, ...(o.localAddress ? { localAddress: o.localAddress } : {}) });
    await once(socket, o.tls ? 'secureConnect' : 'connect');
    const session = new RawSmtp(socket);
    session.greeting = await session.reply();
    return session;
  }

  get ended(): boolean {
    return this.isClosed;
  }

  /** One command; resolves to its reply, its lines joined by \n ('' when the connection closed first). */
  command(line: string): Promise<string> {
    const answer = this.reply();
    this.socket.write(`${line}\r\n`);
    return answer;
  }

  /** Commands in one write (RFC 2920); resolves to their replies in order. */
  commands(lines: string[]): Promise<string[]> {
    const answers = lines.map(() => this.reply());
    this.socket.write(lines.map((l) => `${l}\r\n`).join(''));
    return Promise.all(answers);
  }

  /** Bytes as they are, no reply awaited (a message dripping in). */
  write(data: string): void {
    if (!this.isClosed) this.socket.write(data);
  }

  /** The next reply, whenever it comes ('' if the connection closes first). */
  reply(): Promise<string> {
    return this.replies.next(this.isClosed);
  }

  /** STARTTLS, then the TLS handshake over the same connection. */
  async starttls(options: ConnectionOptions): Promise<PeerCertificate> {
    const ready = await this.command('STARTTLS');
    if (!ready.startsWith('220')) throw new Error(`STARTTLS refused: ${ready}`);
    const plain = this.socket;
    plain.removeAllListeners('data');
    const secure = connectTls({ socket: plain, ...options });
    await once(secure, 'secureConnect');
    this.socket = secure;
    this.listen(secure);
    return secure.getPeerCertificate();
  }

  destroy(): void {
    this.socket.destroy();
  }

  private listen(socket: Socket): void {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.replies.push(chunk));
  }

  private flushWaiting(): void {
    this.replies.end();
  }
}

/** The ListenerOptions main.ts would build, for a listener a test starts itself over a world's services. */
export function listenerOptionsFor(
  over: Omit<Partial<ListenerOptions>, 'limits'> & { limits?: Partial<SmtpLimits> } = {},
): ListenerOptions {
  const { limits, ...rest } = over;
  return {
    name: 'inbound',
    host: '127.0.0.1',
    port: 0,
    hostname: 'mta.direct.test',
    tls: { key: null, cert: null },
    dataDir: '/nonexistent',
    maxBytes: 1024 * 1024,
    maxClients: 20,
    reverse: null,
    logger: silentLogger(),
    ...rest,
    limits: {
      maxClientsPerIp: 20,
      sessionTimeoutMs: 60_000,
      dataTimeoutMs: 60_000,
      minDataRate: 0,
      hardErrorLimit: 20,
      ...limits,
    },
  };
}

/** A counter's value for these labels in this process's registry (0 before its first count). */
export async function counterValue(
  counter: { get(): Promise<{ values: Array<{ labels: Record<string, string | number>; value: number }> }> },
  labels: Record<string, string>,
): Promise<number> {
  const { values } = await counter.get();
  return values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value ?? 0;
}
