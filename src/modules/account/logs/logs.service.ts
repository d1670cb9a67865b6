import { newId } from '../../../lib/ids.js';
import type { Clock } from '../../../lib/time.js';
import type { Logger } from '../../../log/logger.js';
import type { GroupCommit } from '../../../store/group-commit.js';
import type { Store } from '../../../store/store.js';
import { insertRequestLogs, pageOfRequestLogs, pruneRequestLogs } from './logs.repo.js';
import { MAX_LOGGED_PATH, statusRange, type RequestLog } from './request-log.js';
import { idPage, type Page } from '../../../lib/page.js';

export interface LogDeps {
  store: Store;
  writer: GroupCommit;
  clock: Clock;
  logger: Logger;
}

/** What the edge knows of a finished request, and when it finished: a log line before its id. */
export type FinishedRequest = Omit<RequestLog, 'id'>;

/** Where a flushed batch goes: this thread's writer, unless `serve` sends it to the background thread. */
export type RequestLogSink = (batch: FinishedRequest[]) => Promise<void>;

/**
 * Requests wait here and are written a batch at a time (flush, every 100 ms
 * from roles/request-logs.ts): a request never waits for its own log line.
 * If the database falls behind, the oldest waiting lines are dropped and
 * counted rather than memory growing without bound.
 */
export const MAX_WAITING = 50_000;
const PRUNE_BATCH = 5_000;

/** Stores a batch in one of this thread's group commits. */
async function writeRequestLogs(deps: LogDeps, batch: FinishedRequest[]): Promise<void> {
  const rows: RequestLog[] = batch.map((r) => ({
    id: newId('requestLog', r.createdAt),
    projectId: r.projectId,
    keyId: r.keyId,
    requestId: r.requestId,
    method: r.method,
    path: r.path.slice(0, MAX_LOGGED_PATH),
    status: r.status,
    durationMs: Math.round(r.durationMs),
    createdAt: r.createdAt,
  }));
  await deps.writer.run((trx) => insertRequestLogs(trx, rows));
}

async function listRequestLogs(
  deps: LogDeps,
  projectId: string,
  opts: { limit: number; cursor?: string | undefined; status?: string | undefined; path?: string | undefined },
): Promise<Page<RequestLog>> {
  const rows = await pageOfRequestLogs(deps.store.reader, projectId, opts.limit, opts.cursor, {
    status: opts.status === undefined ? undefined : statusRange(opts.status),
    path: opts.path,
  });
  return idPage(rows, opts.limit);
}

/** The retention job: deletes what is older than `retentionMs`, a batch per transaction. */
async function pruneLogs(deps: LogDeps, retentionMs: number): Promise<number> {
  const before = deps.clock.now() - retentionMs;
  let total = 0;
  for (;;) {
    const n = await deps.store.tx((trx) => pruneRequestLogs(trx, before, PRUNE_BATCH));
    total += n;
    if (n < PRUNE_BATCH) return total;
  }
}

export function requestLogService(deps: LogDeps) {
  const waiting: FinishedRequest[] = [];
  let dropped = 0;
  let sink: RequestLogSink = (batch) => writeRequestLogs(deps, batch);
  return {
    /** Called for every request with a key: only remembers it (the edge's per-request cost stays a push). */
    record(r: Omit<FinishedRequest, 'createdAt'>): void {
      const { projectId, keyId, requestId, method, path, status, durationMs } = r;
      waiting.push({ projectId, keyId, requestId, method, path, status, durationMs, createdAt: deps.clock.now() });
      if (waiting.length > MAX_WAITING) {
        dropped += waiting.length - MAX_WAITING;
        waiting.splice(0, waiting.length - MAX_WAITING);
      }
    },
    /**
     * `serve` writes the batches on its background thread, which makes the
     * database's other writes: the API thread, busier per request, only
     * hands them over.
     */
    sendTo(to: RequestLogSink): void {
      sink = to;
    },
    async flush(): Promise<void> {
      if (dropped) {
        deps.logger.warn({ dropped }, 'request log lines dropped: the database fell behind');
        dropped = 0;
      }
      while (waiting.length) await sink(waiting.splice(0, 5_000));
    },
    write: (batch: FinishedRequest[]) => writeRequestLogs(deps, batch),
    list: (projectId: string, opts: Parameters<typeof listRequestLogs>[2]) => listRequestLogs(deps, projectId, opts),
    prune: (retentionMs: number) => pruneLogs(deps, retentionMs),
  };
}

export type RequestLogService = ReturnType<typeof requestLogService>;
