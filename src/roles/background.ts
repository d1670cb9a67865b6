import type { Config } from '../config/config.js';
import type { Logger } from '../log/logger.js';
import type { Role } from './role.js';
import type { WakeRole } from './role.js';
import type { AcceptRequest } from '../modules/sending/emails/accept-rules.js';
import { RemoteAcceptor, type AcceptOutcome } from './accept-relay.js';
import type { DurabilityLink, SharedDurability } from '../store/shared-durability.js';
import type { Worker } from 'node:worker_threads';
import { startThread } from '../lib/thread.js';
import type { ThreadValues } from '../modules/operations/health/metrics.service.js';
import type { FinishedRequest } from '../modules/account/logs/logs.service.js';
import { answerListen, type ListenAnswer, type ListenAsk, type ListenDeliver } from './listen-relay.js';

/** What the background thread runs: everything but the API and the DNS listener. */
export type BackgroundRole = WakeRole;

export interface BackgroundThread extends Role {
  /** new work for a role there (an email stored, a webhook delivery queued) */
  wake(role: BackgroundRole): void;
  /** the accept group commit, which runs there (accept-relay.ts) */
  accept: RemoteAcceptor;
  /** its metrics' values now (none if it does not answer within a second: a scrape must not hang) */
  metrics(): Promise<ThreadValues[]>;
  /** request log lines for it to write (GET /v1/logs): handed over, not waited for */
  requestLogs(batch: FinishedRequest[]): Promise<void>;
}

export interface BackgroundData {
  config: Config;
  /** the SQLite write lock shared with the API thread's store */
  writeLock: SharedArrayBuffer | undefined;
  /** SQLite: its link to the process's fsync thread (its port goes over in the transfer list) */
  durability: DurabilityLink | undefined;
  /** the process's storage state (store/storage-state.ts), shared with the API thread's store */
  storage: SharedArrayBuffer;
  logToStderr: boolean;
}

export type ToBackground =
  | { type: 'wake'; roles: BackgroundRole[] }
  | { type: 'accept'; id: number; requests: AcceptRequest[] }
  | { type: 'metrics'; id: number }
  | { type: 'request-logs'; batch: FinishedRequest[] }
  | ListenAnswer
  | { type: 'stop' };
export type FromBackground =
  | { type: 'ready' }
  | { type: 'stopped' }
  | { type: 'failed'; message: string }
  | { type: 'accepted'; id: number; outcomes: AcceptOutcome[] }
  | { type: 'metrics'; id: number; values: ThreadValues }
  | ListenAsk;

const STOP_TIMEOUT_MS = 30_000;
const SCRAPE_TIMEOUT_MS = 1_000;

/**
 * The MTA, the webhook dispatcher, the cron jobs and the accept group
 * commit on a thread of their own, so that signing, MIME building, SMTP and
 * the queue's writes use a second core and never stall the API's event
 * loop. The two threads share nothing but the database (each its own
 * connections; one SQLite write transaction at a time through the shared
 * write lock, which the API thread now takes only for its rarer writes),
 * wake-up messages and the accepted emails going over and back.
 * If the thread dies, `onFailure` is told: the process cannot do its job
 * without it. `listen` writes a `posthorn listen` delivery of its
 * dispatcher to this thread's stream (ListenHub.deliver; listen-relay.ts).
 */
export async function startBackgroundThread(
  data: BackgroundData,
  logger: Logger,
  onFailure: (reason: string) => void,
  durability: SharedDurability | null,
  listen: ListenDeliver,
): Promise<BackgroundThread> {
  // its entry is the thread's own composition root, beside main.ts
  const worker = startThread(import.meta.url, '../background-thread', {
    workerData: data,
    transferList: data.durability ? [data.durability.port] : [],
  });
  await ready(worker);
  let stopping = false;
  const post = (m: ToBackground) => worker.postMessage(m);
  const accept = new RemoteAcceptor(
    (id, requests) => post({ type: 'accept', id, requests }),
    // without a shared fsync thread (PostgreSQL) the commits come back already durable, with no number
    (seq) => durability?.whenDurable(seq) ?? Promise.resolve(),
  );
  const scrapes = metricsScrapes(post);
  worker.on('message', (m: FromBackground) => {
    if (m.type === 'accepted') accept.answered(m.id, m.outcomes);
    if (m.type === 'metrics') scrapes.answered(m.id, m.values);
    if (m.type === 'listen') post(answerListen(m, listen));
  });
  watchForFailure(worker, logger, accept, () => stopping, onFailure);
  return {
    name: 'background',
    accept,
    wake: batchedWakes(
      (roles) => post({ type: 'wake', roles }),
      () => stopping,
    ),
    async requestLogs(batch) {
      if (!stopping) post({ type: 'request-logs', batch });
    },
    metrics() {
      if (stopping) return Promise.resolve([]);
      return scrapes.ask();
    },
    async stop() {
      if (stopping) return;
      stopping = true;
      await stopWorker(worker, logger);
    },
  };
}

/** The thread's end other than by stop(): accepts waiting for it fail, and the process is told. */
function watchForFailure(
  worker: Worker,
  logger: Logger,
  accept: RemoteAcceptor,
  stopping: () => boolean,
  onFailure: (reason: string) => void,
): void {
  worker.on('error', (e) => {
    logger.fatal({ err: e }, 'the background thread failed');
    accept.close('the background thread failed');
    if (!stopping()) onFailure(e.message);
  });
  worker.on('exit', (code) => {
    accept.close('the background thread has stopped');
    if (!stopping()) {
      logger.fatal({ code }, 'the background thread exited');
      onFailure(`the background thread exited with code ${code}`);
    }
  });
}

/** The thread's metrics, asked for by /metrics: each scrape gets its values, or none after SCRAPE_TIMEOUT_MS. */
function metricsScrapes(post: (m: ToBackground) => void) {
  const scrapes = new Map<number, (v: ThreadValues[]) => void>();
  let scrapeId = 0;
  return {
    answered(id: number, values: ThreadValues): void {
      scrapes.get(id)?.([values]);
    },
    ask(): Promise<ThreadValues[]> {
      const id = ++scrapeId;
      return new Promise<ThreadValues[]>((resolve) => {
        const timer = setTimeout(() => answer([]), SCRAPE_TIMEOUT_MS);
        function answer(v: ThreadValues[]) {
          clearTimeout(timer);
          scrapes.delete(id);
          resolve(v);
        }
        scrapes.set(id, answer);
        post({ type: 'metrics', id });
      });
    },
  };
}

/** Resolves once the thread's roles have started; rejects (and ends the thread) if it fails first. */
function ready(worker: Worker): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onMessage = (m: FromBackground) => {
      if (m.type === 'ready') done(null);
      if (m.type === 'failed') done(new Error(`the background thread did not start: ${m.message}`));
    };
    const onError = (e: Error) => done(e);
    const onExit = (code: number) => done(new Error(`the background thread exited during start (code ${code})`));
    function done(e: Error | null) {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      if (e) {
        void worker.terminate();
        reject(e);
      } else resolve();
    }
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
}

/** Wake-ups of one turn of the event loop go over as one message. */
function batchedWakes(
  send: (roles: BackgroundRole[]) => void,
  stopping: () => boolean,
): (role: BackgroundRole) => void {
  let pending: Set<BackgroundRole> | null = null;
  return (role) => {
    if (stopping()) return;
    if (!pending) {
      pending = new Set();
      setImmediate(() => {
        const roles = [...pending!];
        pending = null;
        if (!stopping()) send(roles);
      });
    }
    pending.add(role);
  };
}

/** Asks the thread to stop its roles and close its store, ends it if it does not in time. */
async function stopWorker(worker: Worker, logger: Logger): Promise<void> {
  const stopped = new Promise<void>((resolve) => {
    worker.on('message', (m: FromBackground) => {
      if (m.type === 'stopped') resolve();
    });
    worker.once('exit', () => resolve());
  });
  worker.postMessage({ type: 'stop' } satisfies ToBackground);
  const timer = setTimeout(() => {
    logger.warn('the background thread did not stop in time; ending it');
    void worker.terminate();
  }, STOP_TIMEOUT_MS);
  await stopped;
  clearTimeout(timer);
  // Its roles are stopped and its store is closed: whatever still holds its event loop open
  // (an idle keep-alive socket, a resolver's socket) goes with it.
  await worker.terminate();
}
