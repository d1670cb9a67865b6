import { availableParallelism } from 'node:os';
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
  thread: Thread;
}

interface Thread {
  worker: Worker | null;
  /** messages sent to it (or about to be) and not answered yet */
  pending: number;
  /** the messages for it asked for in this turn of the event loop */
  outgoing: SignRequest[] | null;
}

/**
 * MIME building and DKIM signing on threads of their own, one per core but one (at most four): together
 * they are the largest share of an outgoing message's CPU, and the MTA's thread also runs the
 * queue's SQL and every SMTP session. Each message goes to the thread with the fewest waiting. If a
 * thread dies, the messages it held are built on the calling thread (slower, not wrong) and the
 * next go to the threads left, or are built here once none is; each failure is logged once.
 */
export function startSigningThread(logger: Logger, threads = Math.min(4, availableParallelism() - 1)): MessageSigner {
  return new SigningThreads(logger, Math.max(1, threads));
}

class SigningThreads implements MessageSigner {
  private readonly inline = signedMessageBuilder();
  private threads: Thread[];
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly logger: Logger,
    count: number,
  ) {
    this.threads = Array.from({ length: count }, () => {
      const t: Thread = { worker: startThread(import.meta.url, 'signing-thread'), pending: 0, outgoing: null };
      t.worker!.on('message', (results: SignResult[]) => this.received(t, results));
      t.worker!.on('error', (e) => this.gone(t, e.message));
      t.worker!.on('exit', (code) => this.gone(t, `exit code ${code}`));
      return t;
    });
  }

  sign(input: SignedMessageInput): Promise<Buffer> {
    const thread = this.leastBusy();
    if (!thread) return this.inline(input);
    return new Promise<Buffer>((resolve, reject) => {
      const id = this.nextId++;
      this.waiting.set(id, { input, resolve, reject, thread });
      thread.pending++;
      // The messages asked for within a millisecond go over as one: each message between threads
      // wakes the other one, which costs more than copying the inputs. Under load SMTP sessions ask
      // one message at a time as each frees up; gathered per turn of the event loop instead, they
      // crossed about one at a time (a millisecond: −5% CPU a delivered message, interleaved runs).
      if (!thread.outgoing) {
        thread.outgoing = [];
        setTimeout(() => this.flush(thread), 1);
      }
      thread.outgoing.push({ id, input });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const workers = this.threads.map((t) => t.worker);
    for (const t of this.threads) t.worker = null;
    await Promise.all(workers.flatMap((w) => (w ? [w.terminate()] : [])));
    // anything still waiting (an attempt cut short by the stop) is built here
    this.buildHere([...this.waiting.keys()]);
  }

  private leastBusy(): Thread | null {
    let best: Thread | null = null;
    for (const t of this.threads) if (t.worker && (!best || t.pending < best.pending)) best = t;
    return best;
  }

  private flush(thread: Thread): void {
    const batch = thread.outgoing!;
    thread.outgoing = null;
    // a thread gone meanwhile has had these built elsewhere already (they were waiting)
    try {
      thread.worker?.postMessage(batch);
    } catch {
      // input that cannot cross to the thread is built here
      this.buildHere(batch.map((r) => r.id));
    }
  }

  private received(thread: Thread, results: SignResult[]): void {
    for (const m of results) {
      const w = this.waiting.get(m.id);
      if (!w) continue;
      this.waiting.delete(m.id);
      thread.pending--;
      if (m.error !== undefined) w.reject(new Error(m.error));
      else w.resolve(asBuffer(m.raw!));
    }
  }

  private gone(thread: Thread, why: string): void {
    if (!thread.worker) return;
    thread.worker = null;
    this.threads = this.threads.filter((t) => t !== thread);
    if (this.closed) return;
    this.logger.error(
      { reason: why },
      this.threads.length
        ? `the signing thread stopped; ${this.threads.length} other signing thread(s) go on`
        : 'the signing thread stopped; messages are signed on the MTA thread',
    );
    // The messages it held are built here, not handed to another thread: input that killed one
    // thread would kill the next one too.
    this.buildHere([...this.waiting].filter(([, w]) => w.thread === thread).map(([id]) => id));
  }

  private buildHere(ids: number[]): void {
    for (const id of ids) {
      const w = this.waiting.get(id);
      if (!w) continue;
      this.waiting.delete(id);
      w.thread.pending--;
      this.inline(w.input).then(w.resolve, w.reject);
    }
  }
}
