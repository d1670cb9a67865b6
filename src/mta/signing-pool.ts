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
  resolve(raw: Buffer): void;
  reject(e: unknown): void;
}

/**
 * MIME building and DKIM signing on a thread of their own: together they
 * are the largest share of an outgoing message's CPU on the MTA's thread,
 * which also runs the queue's SQL and every SMTP session. If the thread
 * dies, messages are built on the calling thread instead (slower, not
 * wrong), and the failure is logged once.
 */
export function startSigningThread(logger: Logger): MessageSigner {
  const inline = signedMessageBuilder();
  let worker: Worker | null = startThread(import.meta.url, 'signing-thread');
  const waiting = new Map<number, Waiting>();
  let nextId = 1;
  const gone = (why: string) => {
    if (!worker) return;
    worker = null;
    logger.error({ reason: why }, 'the signing thread stopped; messages are signed on the MTA thread');
    // the messages it held are built here instead
    for (const w of waiting.values()) inline(w.input).then(w.resolve, w.reject);
    waiting.clear();
  };
  worker.on('message', (results: SignResult[]) => {
    for (const m of results) {
      const w = waiting.get(m.id);
      if (!w) continue;
      waiting.delete(m.id);
      if (m.error !== undefined) w.reject(new Error(m.error));
      else w.resolve(asBuffer(m.raw!));
    }
  });
  worker.on('error', (e) => gone(e.message));
  worker.on('exit', (code) => gone(`exit code ${code}`));
  // The messages asked for in one turn of the event loop (a claimed batch) go over as one:
  // each message between threads wakes the other one, which costs more than copying the inputs.
  let outgoing: SignRequest[] | null = null;
  const flush = () => {
    const batch = outgoing!;
    outgoing = null;
    // without the thread, its stop already built these here (they were waiting)
    try {
      worker?.postMessage(batch);
    } catch {
      // input that cannot cross to the thread is built here
      for (const r of batch) {
        const w = waiting.get(r.id);
        if (!w) continue;
        waiting.delete(r.id);
        inline(r.input).then(w.resolve, w.reject);
      }
    }
  };
  return {
    sign(input) {
      if (!worker) return inline(input);
      return new Promise<Buffer>((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, { input, resolve, reject });
        if (!outgoing) {
          outgoing = [];
          setImmediate(flush);
        }
        outgoing.push({ id, input });
      });
    },
    async close() {
      const w = worker;
      worker = null;
      await w?.terminate();
      // anything still waiting (an attempt cut short by the stop) is built here
      for (const x of waiting.values()) inline(x.input).then(x.resolve, x.reject);
      waiting.clear();
    },
  };
}
