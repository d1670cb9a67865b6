import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { waitFor } from './wait.js';

export interface SinkMessage {
  envelope: { from: string; to: string[] };
  raw: Buffer;
  secure: boolean;
  user: string | null;
  /** when the message's data was complete (ms since the epoch) */
  at: number;
  /** the client's address: which source IP the message left from */
  remoteAddress: string;
  /** the name the client gave in EHLO */
  helo: string;
}

/** An SMTP reply a hook gives instead of the sink's own behaviour. */
export interface SinkReply {
  code: number;
  message: string;
}

export interface SinkOptions {
  /** offer STARTTLS (smtp-server's own self-signed certificate) */
  starttls?: boolean;
  /** the key and certificate (PEM) STARTTLS presents instead of smtp-server's own */
  tls?: { key: string; cert: string };
  /** require AUTH (relay tests): user → password */
  users?: Record<string, string>;
  /** how many times tempfail.test refuses an address before accepting it */
  tempfailTimes?: number;
  /** how long slow.test holds the reply to DATA */
  holdMs?: number;
  /** where to listen: 127.0.0.1 (default), another loopback address or ::1, on port 0 unless given */
  host?: string;
  /** hold the greeting of the first connection this long: a client connected, its SMTP transaction not begun */
  holdFirstGreetingMs?: number;
  port?: number;
  /** refuse a connection with this banner (the client's address given), or null to greet it */
  banner?: (remoteAddress: string) => SinkReply | null;
  /** hold every reply to DATA this long (a receiver that takes its time, so that connections overlap) */
  dataDelayMs?: number;
  /** answer a recipient with this reply before the domain rules, or null to go on */
  rcpt?: (address: string, remoteAddress: string) => SinkReply | null;
}

/**
 * An SMTP server on 127.0.0.1 whose behaviour is picked by the recipient's
 * domain (KumoMTA's sink style, like the conformance harness):
 * ok.test and anything else accept; reject.test 550 at RCPT (unknown user); blocklist.test 554 at
 * RCPT (the client's IP on a blocklist); full.test 552 at RCPT (a full mailbox); tempfail.test
 * 451 at RCPT the first N times per address (local part tf<N>-…); drop.test
 * takes the whole message and closes without answering; cut.test closes
 * right after its 354, as the body starts arriving; slow.test holds the answer to DATA
 * (local part hold<ms>-…).
 */
export class SmtpSink {
  readonly messages: SinkMessage[] = [];
  private readonly rcpt = new Map<string, number>();
  connections = 0;
  open = 0;
  maxOpen = 0;
  /** open connections and their most at once, by client address */
  readonly openBy = new Map<string, number>();
  readonly maxOpenBy = new Map<string, number>();
  private server!: SMTPServer;
  port = 0;
  private seq = 0;

  constructor(private readonly o: SinkOptions = {}) {}

  async start(): Promise<this> {
    const users = this.o.users;
    this.server = new SMTPServer({
      secure: false,
      ...(this.o.tls ? { key: this.o.tls.key, cert: this.o.tls.cert } : {}),
      authOptional: !users,
      disabledCommands: [...(this.o.starttls ? [] : ['STARTTLS']), ...(users ? [] : ['AUTH'])],
      allowInsecureAuth: true,
      logger: false,
      size: 50 * 1024 * 1024,
      // stop() ends open sessions after a second, as a server that goes away would (smtp-server waits 30 s)
      closeTimeout: 1000,
      onConnect: (session, cb) => {
        const from = session.remoteAddress;
        const refused = this.o.banner?.(from);
        if (refused) return cb(smtpError(refused.code, refused.message));
        this.connections++;
        this.open++;
        this.maxOpen = Math.max(this.maxOpen, this.open);
        this.openBy.set(from, (this.openBy.get(from) ?? 0) + 1);
        this.maxOpenBy.set(from, Math.max(this.maxOpenBy.get(from) ?? 0, this.openBy.get(from)!));
        (session as { posthornCounted?: boolean }).posthornCounted = true;
        if (this.connections === 1 && this.o.holdFirstGreetingMs) setTimeout(cb, this.o.holdFirstGreetingMs);
        else cb();
      },
      onClose: (session) => {
        if (!(session as { posthornCounted?: boolean }).posthornCounted) return;
        this.open--;
        this.openBy.set(session.remoteAddress, (this.openBy.get(session.remoteAddress) ?? 1) - 1);
      },
      onAuth: (auth, _session, cb) => {
        if (users && users[auth.username ?? ''] === auth.password) return cb(null, { user: auth.username });
        cb(new Error('535 5.7.8 authentication failed'));
      },
      onRcptTo: (address: SMTPServerAddress, session, cb) => {
        const hooked = this.o.rcpt?.(address.address.toLowerCase(), session.remoteAddress);
        if (hooked) return cb(smtpError(hooked.code, hooked.message));
        this.onRcpt(address.address.toLowerCase(), cb);
      },
      onData: (stream, session, cb) => this.onData(stream, session, cb),
    });
    this.server.on('error', () => undefined);
    await new Promise<void>((resolve) =>
      this.server.listen(this.o.port ?? 0, this.o.host ?? '127.0.0.1', () => resolve()),
    );
    this.port = (this.server as unknown as { server: { address(): AddressInfo } }).server.address().port;
    return this;
  }

  private onRcpt(address: string, cb: (err?: Error | null) => void): void {
    const n = (this.rcpt.get(address) ?? 0) + 1;
    this.rcpt.set(address, n);
    const [local = '', domain = ''] = address.split('@');
    if (domain === 'reject.test')
      return cb(smtpError(550, '5.1.1 <' + address + '>: Recipient address rejected: User unknown'));
    if (domain === 'blocklist.test')
      return cb(smtpError(554, '5.7.1 Service unavailable; Client host [127.0.0.1] blocked using zen.spamhaus.org'));
    if (domain === 'full.test') return cb(smtpError(552, '5.2.2 <' + address + '>: Mailbox full'));
    if (domain === 'tempfail.test') {
      const times = Number(/^tf(\d+)-/.exec(local)?.[1] ?? this.o.tempfailTimes ?? 1);
      if (n <= times) return cb(smtpError(451, '4.2.0 <' + address + '>: try again later'));
    }
    cb();
  }

  private onData(
    stream: NodeJS.ReadableStream,
    session: SMTPServerSession,
    cb: (err?: Error | null, message?: string) => void,
  ): void {
    if (session.envelope.rcptTo.some((r) => r.address.toLowerCase().endsWith('@cut.test'))) {
      // The connection dies as the body starts coming in: right after the 354 (sent once this
      // returns), not at the first chunk read. Waiting for a chunk let a busy test process read it
      // late, after the client had handed the whole body to loopback's socket buffers (they take
      // tens of MB), which the client rightly counts as ambiguous.
      setImmediate(() => this.dropConnection(session.id));
      stream.resume();
      return;
    }
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const to = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
      this.messages.push({
        envelope: { from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to },
        raw: Buffer.concat(chunks),
        secure: session.secure,
        user: (session.user as string | undefined) ?? null,
        at: Date.now(),
        remoteAddress: session.remoteAddress,
        helo: session.hostNameAppearsAs,
      });
      const domains = to.map((a) => a.split('@')[1]);
      if (domains.includes('drop.test')) {
        // the whole message arrived; the answer never does
        this.dropConnection(session.id);
        return;
      }
      const reply = () => cb(null, `Ok: queued as SINK${++this.seq}`);
      if (this.o.dataDelayMs) {
        setTimeout(reply, this.o.dataDelayMs);
        return;
      }
      if (domains.includes('slow.test')) {
        const hold = Number(
          /^hold(\d+)-/.exec(to.find((a) => a.endsWith('@slow.test'))!)?.[1] ?? this.o.holdMs ?? 6000,
        );
        setTimeout(reply, hold);
        return;
      }
      reply();
    });
  }

  private dropConnection(sessionId: string): void {
    const connections = (this.server as unknown as { connections: Set<{ id: string; _socket: { destroy(): void } }> })
      .connections;
    for (const c of connections) if (c.id === sessionId) c._socket.destroy();
  }

  messagesTo(address: string): SinkMessage[] {
    return this.messages.filter((m) => m.envelope.to.includes(address.toLowerCase()));
  }

  rcptAttempts(address: string): number {
    return this.rcpt.get(address.toLowerCase()) ?? 0;
  }

  waitForMessage(address: string, timeoutMs = 10_000): Promise<SinkMessage> {
    return waitFor(async () => this.messagesTo(address)[0], timeoutMs, `a message to ${address} at the sink`);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function smtpError(code: number, message: string): Error {
  const e = new Error(message) as Error & { responseCode: number };
  e.responseCode = code;
  return e;
}

export const startSink = (o?: SinkOptions) => new SmtpSink(o).start();
