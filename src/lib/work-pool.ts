import { availableParallelism } from 'node:os';
import { parentPort, type Worker } from 'node:worker_threads';
import { ApiError, apiError, type ErrorCode } from './errors.js';
import { InputRefused } from './input-refused.js';

// A small pool of worker threads for the work that must not run on the
// thread answering HTTP, SMTP and DNS: parsing and transforming untrusted or
// user-given bytes (inbound MIME, DSN/ARF/DMARC reports, zip and gzip,
// templates and their HTML-to-text). Each worker runs one job at a time, so
// the time a job takes on it is its CPU time (Node 20 has no per-thread
// CPU clock); a job past its budget, or one that runs out of its heap, is
// the input's fault: the worker is stopped, a new one takes its place and
// the caller gets InputRefused. Idle workers do not keep a process alive.

// functions of one argument of any type (each task names its own)
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type TaskTable = Record<string, (input: any) => unknown>;

export interface WorkPoolOptions {
  /** null: one per core */
  threads: number | null;
  timeBudgetMs: number;
  memoryMb: number;
  /** starts one worker thread running serveTasks over the same table */
  start(resourceLimits: { maxOldGenerationSizeMb: number; maxYoungGenerationSizeMb: number }): Worker;
  /** jobs waiting for a worker at most; past it a job is refused as temporary (service_unavailable) */
  maxQueue?: number;
  /** a job's outcome, for metrics */
  onDone?(task: string, outcome: 'ok' | 'refused' | 'over_budget' | 'failed'): void;
}

interface Job {
  task: string;
  input: unknown;
  resolve(value: unknown): void;
  reject(e: unknown): void;
}

interface Slot {
  worker: Worker;
  /** the thread has loaded its tasks: a job's budget starts when it reaches a ready thread */
  ready: boolean;
  job: Job | null;
  timer: NodeJS.Timeout | null;
}

/** What crosses to a worker, and back. */
interface Request {
  task: string;
  input: unknown;
}
type Reply = { ready: true } | { ok: true; value: unknown } | { ok: false; error: SentError };
interface SentError {
  name: string;
  message: string;
  limit?: string;
  status?: number;
  code?: string;
  field?: string;
  headers?: Record<string, string>;
}

export class WorkPool<T extends TaskTable> {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private readonly size: number;
  private closed = false;

  constructor(private readonly o: WorkPoolOptions) {
    this.size = Math.max(1, o.threads ?? Math.min(8, availableParallelism()));
  }

  run<K extends keyof T & string>(task: K, input: Parameters<T[K]>[0]): Promise<Awaited<ReturnType<T[K]>>> {
    if (this.closed) return Promise.reject(apiError('service_unavailable', 'the server is stopping'));
    if (this.queue.length >= (this.o.maxQueue ?? 1000))
      return Promise.reject(
        apiError('service_unavailable', 'too much untrusted input is waiting to be read; try again later'),
      );
    return new Promise((resolve, reject) => {
      this.queue.push({ task, input, resolve: resolve as (v: unknown) => void, reject });
      this.pump();
    });
  }

  /** Jobs waiting and running (tests, metrics). */
  get pending(): number {
    return this.queue.length + this.slots.filter((s) => s.job).length;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(apiError('service_unavailable', 'the server is stopping'));
    await Promise.all(
      this.slots.splice(0).map((s) => this.stop(s, apiError('service_unavailable', 'the server is stopping'))),
    );
  }

  private pump(): void {
    while (this.queue.length) {
      const slot = this.slots.find((s) => s.ready && !s.job);
      if (!slot) break;
      this.give(slot, this.queue.shift()!);
    }
    // threads still loading will take some of what waits
    const starting = this.slots.filter((s) => !s.ready).length;
    for (let n = this.queue.length - starting; n > 0 && this.slots.length < this.size; n--) this.spawn();
  }

  private spawn(): Slot {
    const young = Math.max(8, Math.floor(this.o.memoryMb / 8));
    const worker = this.o.start({ maxOldGenerationSizeMb: this.o.memoryMb, maxYoungGenerationSizeMb: young });
    const slot: Slot = { worker, ready: false, job: null, timer: null };
    // a thread loading its modules holds the process open until it is ready (then it idles unref'd)
    worker.ref();
    worker.on('message', (reply: Reply) => {
      if ('ready' in reply) {
        slot.ready = true;
        worker.unref();
        return this.pump();
      }
      this.answered(slot, reply);
    });
    // a worker that ran out of its heap exits with ERR_WORKER_OUT_OF_MEMORY: the input needed more than the cap
    worker.on('error', (e: Error & { code?: string }) =>
      this.died(
        slot,
        e.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'memory' : null,
        e.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `needs more than ${this.o.memoryMb} MB to read`
          : `could not be read (${e.message})`,
      ),
    );
    worker.on('exit', () => this.died(slot, null, 'could not be read: the reading thread stopped'));
    this.slots.push(slot);
    return slot;
  }

  private give(slot: Slot, job: Job): void {
    slot.job = job;
    slot.timer = setTimeout(() => this.overBudget(slot), this.o.timeBudgetMs);
    // the thread holds a job: it must not let the process exit under it
    slot.worker.ref();
    slot.worker.postMessage({ task: job.task, input: job.input } satisfies Request);
  }

  private answered(slot: Slot, reply: Exclude<Reply, { ready: true }>): void {
    const job = this.finish(slot);
    if (!job) return;
    if (reply.ok) {
      this.o.onDone?.(job.task, 'ok');
      job.resolve(reply.value);
    } else {
      const e = revive(reply.error);
      this.o.onDone?.(job.task, e instanceof InputRefused || e instanceof ApiError ? 'refused' : 'failed');
      job.reject(e);
    }
    this.pump();
  }

  private overBudget(slot: Slot): void {
    const job = slot.job;
    if (!job) return;
    this.o.onDone?.(job.task, 'over_budget');
    void this.stop(slot, new InputRefused('time_budget', `took longer than ${this.o.timeBudgetMs} ms to read`));
    this.pump();
  }

  /** The worker stopped by itself (a crash, its heap exhausted): its job is refused and a new worker takes its place. */
  private died(slot: Slot, limit: string | null, message: string): void {
    const i = this.slots.indexOf(slot);
    if (i < 0) return;
    this.slots.splice(i, 1);
    const job = this.finish(slot);
    if (job) {
      this.o.onDone?.(job.task, limit ? 'refused' : 'failed');
      job.reject(limit ? new InputRefused(limit, message) : new Error(message));
    }
    // a thread that cannot even load would be started again and again: what waits fails instead, the next run() tries anew
    if (!slot.ready)
      for (const waiting of this.queue.splice(0))
        waiting.reject(new Error(`the parsing thread could not start: ${message}`));
    if (!this.closed) this.pump();
  }

  private async stop(slot: Slot, why: Error): Promise<void> {
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    this.finish(slot)?.reject(why);
    await slot.worker.terminate().catch(() => undefined);
  }

  private finish(slot: Slot): Job | null {
    const job = slot.job;
    if (slot.timer) clearTimeout(slot.timer);
    slot.job = null;
    slot.timer = null;
    slot.worker.unref();
    return job;
  }
}

function revive(e: SentError): Error {
  if (e.name === 'InputRefused') return new InputRefused(e.limit ?? 'unreadable', e.message);
  if (e.name === 'ApiError' && e.status && e.code)
    return new ApiError(e.status, e.code as ErrorCode, e.message, e.field, e.headers ?? {});
  return new Error(e.message);
}

function sent(e: unknown): SentError {
  if (e instanceof InputRefused) return { name: e.name, message: e.message, limit: e.limit };
  if (e instanceof ApiError)
    return {
      name: e.name,
      message: e.message,
      status: e.status,
      code: e.code,
      ...(e.field !== undefined ? { field: e.field } : {}),
      headers: e.headers,
    };
  return { name: 'Error', message: e instanceof Error ? e.message : String(e) };
}

/** The worker's side: answers each job with its task's value or its error, one job at a time. */
export function serveTasks(tasks: TaskTable): void {
  const port = parentPort!;
  port.on('message', (req: Request) => {
    const fn = tasks[req.task];
    Promise.resolve()
      .then(() => {
        if (!fn) throw new Error(`no task ${req.task}`);
        return fn(req.input);
      })
      .then(
        (value) => port.postMessage({ ok: true, value } satisfies Reply),
        (e: unknown) => port.postMessage({ ok: false, error: sent(e) } satisfies Reply),
      );
  });
  port.postMessage({ ready: true } satisfies Reply);
}
