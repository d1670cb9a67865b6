import type { Socket } from 'node:net';
import { MAX_QUERY_BYTES } from './packet-check.js';

export interface TcpConnectionLimits {
  /** closed when neither a whole message arrived nor an answer left for this long */
  idleMs: number;
  /** messages of one connection being answered at once; reading waits beyond (RFC 7766 §6.2.1.1 pipelining) */
  maxInFlight: number;
}

export interface TcpMessageHandlers {
  /** false when the message was dropped (the connection is then closed); otherwise `reply` is called once with the answer's bytes */
  message(message: Buffer, reply: (answer: Buffer) => void): boolean;
  /** a length prefix longer than any query: the connection is closed before reading it */
  oversize(): void;
}

/**
 * Reads a connection's length-prefixed messages (RFC 1035 §4.2.2) and writes
 * their answers, pipelined (RFC 7766 §6.2.1.1). A message longer than any
 * query, or one the handler drops, closes the connection: only resolvers talk
 * to this port, and resolvers send queries. The idle timer restarts on a
 * whole message or an answer, never on a byte, so a message trickled a byte
 * at a time does not hold a connection open. Reading stops while the peer
 * does not take its answers.
 */
export function serveTcpConnection(socket: Socket, handlers: TcpMessageHandlers, limits: TcpConnectionLimits): void {
  new TcpConnection(socket, handlers, limits).start();
}

class TcpConnection {
  private buffered: Buffer = Buffer.alloc(0);
  private inFlight = 0;
  private peerEnded = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly socket: Socket,
    private readonly handlers: TcpMessageHandlers,
    private readonly limits: TcpConnectionLimits,
  ) {}

  start(): void {
    const { socket } = this;
    socket.on('data', (chunk: Buffer) => {
      this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
      this.readMessages();
    });
    socket.on('drain', () => {
      this.readMessages();
      this.finishIfDone();
    });
    socket.on('end', () => {
      this.peerEnded = true;
      this.finishIfDone();
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => clearTimeout(this.timer));
    this.arm();
  }

  private arm(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.socket.destroy(), this.limits.idleMs);
    this.timer.unref();
  }

  private readMessages(): void {
    const { socket } = this;
    while (
      !socket.destroyed &&
      this.inFlight < this.limits.maxInFlight &&
      !socket.writableNeedDrain &&
      this.buffered.length >= 2
    ) {
      const size = this.buffered.readUInt16BE(0);
      if (size > MAX_QUERY_BYTES) {
        this.handlers.oversize();
        socket.destroy();
        return;
      }
      if (this.buffered.length < 2 + size) break;
      const message = this.buffered.subarray(2, 2 + size);
      this.buffered = this.buffered.subarray(2 + size);
      this.inFlight++;
      this.arm();
      if (
        !this.handlers.message(
          message,
          once((answer) => this.reply(answer)),
        )
      ) {
        socket.destroy();
        return;
      }
    }
    if (this.inFlight >= this.limits.maxInFlight || socket.writableNeedDrain) socket.pause();
    else if (!this.peerEnded) socket.resume();
  }

  private reply(answer: Buffer): void {
    this.inFlight--;
    if (this.socket.destroyed) return;
    const prefix = Buffer.alloc(2);
    prefix.writeUInt16BE(answer.length);
    this.socket.write(Buffer.concat([prefix, answer]));
    this.arm();
    this.readMessages();
    this.finishIfDone();
  }

  /** After the peer's FIN: answer what it sent, then close; a message cut off by the FIN will never be whole. */
  private finishIfDone(): void {
    if (!this.peerEnded || this.inFlight > 0 || this.socket.destroyed || this.wholeMessageBuffered()) return;
    if (this.buffered.length > 0) this.socket.destroy();
    else this.socket.end();
  }

  private wholeMessageBuffered(): boolean {
    return this.buffered.length >= 2 && this.buffered.length >= 2 + this.buffered.readUInt16BE(0);
  }
}

function once<T>(f: (value: T) => void): (value: T) => void {
  let called = false;
  return (value) => {
    if (called) return;
    called = true;
    f(value);
  };
}
