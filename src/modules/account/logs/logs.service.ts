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

export class RequestLogService {
  private waiting: FinishedRequest[] = [];
  private dropped = 0;
  private sink: RequestLogSink = (batch) => this.write(batch);

  constructor(private readonly deps: LogDeps) {}

  /** Called for every request with a key: only remembers it (the edge's per-request cost stays a push). */
  record(r: Omit<FinishedRequest, 'createdAt'>): void {
    const { projectId, keyId, requestId, method, path, status, durationMs } = r;
    this.waiting.push({
      projectId,
      keyId,
      requestId,
      method,
      path,
      status,
      durationMs,
      createdAt: this.deps.clock.now(),
    });
    if (this.waiting.length > MAX_WAITING) {
      this.dropped += this.waiting.length - MAX_WAITING;
      this.waiting.splice(0, this.waiting.length - MAX_WAITING);
    }
  }

  /**
   * `serve` writes the batches on its background thread, which makes the
   * database's other writes: the API thread, busier per request, only
   * hands them over.
   */
  sendTo(sink: RequestLogSink): void {
    this.sink = sink;
  }

  async flush(): Promise<void> {
    if (this.dropped) {
      this.deps.logger.warn({ dropped: this.dropped }, 'request log lines dropped: the database fell behind');
      this.dropped = 0;
    }
    while (this.waiting.length) await this.sink(this.waiting.splice(0, 5_000));
  }

  /** Stores a batch in one of this thread's group commits. */
  async write(batch: FinishedRequest[]): Promise<void> {
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
    await this.deps.writer.run((trx) => insertRequestLogs(trx, rows));
  }

  async list(
    projectId: string,
    opts: { limit: number; cursor?: string | undefined; status?: string | undefined; path?: string | undefined },
  ): Promise<Page<RequestLog>> {
    const rows = await pageOfRequestLogs(this.deps.store.reader, projectId, opts.limit, opts.cursor, {
      status: opts.status === undefined ? undefined : statusRange(opts.status),
      path: opts.path,
    });
    return idPage(rows, opts.limit);
  }

  /** The retention job: deletes what is older than `retentionMs`, a batch per transaction. */
  async prune(retentionMs: number): Promise<number> {
    const before = this.deps.clock.now() - retentionMs;
    let total = 0;
    for (;;) {
      const n = await this.deps.store.tx((trx) => pruneRequestLogs(trx, before, PRUNE_BATCH));
      total += n;
      if (n < PRUNE_BATCH) return total;
    }
  }
}
