import type { Worker } from 'node:worker_threads';
import { asBuffer } from '../lib/bytes.js';
import type { Logger } from '../log/logger.js';
import { signedMessageBuilder, type SignedMessageInput } from './signed-message.js';
import { startThread } from '../lib/thread.js';

export interface MessageSigner {
  sign(input: SignedMessageInput): Promise<Buffer>;
  close(): Promise<void>;
}

/** What crosses to the signing thread, and back (each direction one array per turn of its event loop). */
export interface SignRequest {
  id: number;
  input: SignedMessageInput;
}
export interface SignResult {
  id: number;
  raw?: Uint8Array;
  error?: string;
}

interface Waiting {
  input: SignedMessageInput;
  resolve: (raw: Buffer) => void;
  reject: (e: unknown) => void;
}

/**
 * MIME building and DKIM signing on a thread of their own: together they
 * are the largest share of an outgoing message's CPU on the MTA's thread,
 * which also runs the queue's SQL and every SMTP session. If the thread
 * dies, messages are built on the calling thread instead (slower, not
 * wrong), and the failure is logged once.
 */
export function startSigningThread(logger: Logger): MessageSigner {
  return new SigningThread(logger);
}

class SigningThread implements MessageSigner {
  private readonly inline = signedMessageBuilder();
  private worker: Worker | null = startThread(import.meta.url, 'signing-thread');
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;
  /** the messages asked for in this turn of the event loop */
  private outgoing: SignRequest[] | null = null;

  constructor(private readonly logger: Logger) {
    this.worker!.on('message', (results: SignResult[]) => this.received(results));
    this.worker!.on('error', (e) => this.gone(e.message));
    this.worker!.on('exit', (code) => this.gone(`exit code ${code}`));
  }

  sign(input: SignedMessageInput): Promise<Buffer> {
    if (!this.worker) return this.inline(input);
    return new Promise<Buffer>((resolve, reject) => {
      const id = this.nextId++;
      this.waiting.set(id, { input, resolve, reject });
      // The messages asked for in one turn of the event loop (a claimed batch) go over as one:
      // each message between threads wakes the other one, which costs more than copying the inputs.
      if (!this.outgoing) {
        this.outgoing = [];
        setImmediate(() => this.flush());
      }
      this.outgoing.push({ id, input });
    });
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    await w?.terminate();
    // anything still waiting (an attempt cut short by the stop) is built here
    this.buildHere([...this.waiting.keys()]);
  }

  private flush(): void {
    const batch = this.outgoing!;
    this.outgoing = null;
    // without the thread, its stop already built these here (they were waiting)
    try {
      this.worker?.postMessage(batch);
    } catch {
      // input that cannot cross to the thread is built here
      this.buildHere(batch.map((r) => r.id));
    }
  }

  private received(results: SignResult[]): void {
    for (const m of results) {
      const w = this.waiting.get(m.id);
      if (!w) continue;
      this.waiting.delete(m.id);
      if (m.error !== undefined) w.reject(new Error(m.error));
      else w.resolve(asBuffer(m.raw!));
    }
  }

  private gone(why: string): void {
    if (!this.worker) return;
    this.worker = null;
    this.logger.error({ reason: why }, 'the signing thread stopped; messages are signed on the MTA thread');
    // the messages it held are built here instead
    this.buildHere([...this.waiting.keys()]);
  }

  private buildHere(ids: number[]): void {
    for (const id of ids) {
      const w = this.waiting.get(id);
      if (!w) continue;
      this.waiting.delete(id);
      this.inline(w.input).then(w.resolve, w.reject);
    }
  }
}
