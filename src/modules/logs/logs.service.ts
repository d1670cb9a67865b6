import { newId } from '../../lib/ids.js';
import type { Clock } from '../../lib/time.js';
import type { Logger } from '../../log/logger.js';
import type { GroupCommit } from '../../store/group-commit.js';
import type { Store } from '../../store/store.js';
import { insertRequestLogs, pageOfRequestLogs, pruneRequestLogs } from './logs.repo.js';
import { MAX_LOGGED_PATH, statusRange, type RequestLog } from './request-log.js';

export interface LogDeps {
  store: Store;
  writer: GroupCommit;
  clock: Clock;
  logger: Logger;
}

/** What the edge knows of a finished request. */
export interface FinishedRequest {
  projectId: string;
  keyId: string;
  requestId: string;
  method: string;
  path: string;
  status: number;
  durationMs: number;
}

/**
 * Requests wait here and are written a batch at a time (flush, every second
 * from roles/request-logs.ts): a request never waits for its own log line.
 * If the database falls behind, the oldest waiting lines are dropped and
 * counted rather than memory growing without bound.
 */
export const MAX_WAITING = 50_000;
const PRUNE_BATCH = 5_000;

export class RequestLogService {
  private waiting: RequestLog[] = [];
  private dropped = 0;

  constructor(private readonly deps: LogDeps) {}

  record(r: FinishedRequest): void {
    const now = this.deps.clock.now();
    this.waiting.push({ ...r, id: newId('requestLog', now), path: r.path.slice(0, MAX_LOGGED_PATH), durationMs: Math.round(r.durationMs), createdAt: now });
    if (this.waiting.length > MAX_WAITING) {
      this.waiting.splice(0, this.waiting.length - MAX_WAITING);
      this.dropped++;
    }
  }

  async flush(): Promise<void> {
    if (this.dropped) {
      this.deps.logger.warn({ dropped: this.dropped }, 'request log lines dropped: the database fell behind');
      this.dropped = 0;
    }
    while (this.waiting.length) {
      const batch = this.waiting.splice(0, 5_000);
      await this.deps.writer.run((trx) => insertRequestLogs(trx, batch));
    }
  }

  async list(projectId: string, opts: { limit: number; cursor?: string | undefined; status?: string | undefined; path?: string | undefined }): Promise<{ items: RequestLog[]; more: boolean }> {
    const rows = await pageOfRequestLogs(this.deps.store.reader, projectId, opts.limit, opts.cursor, {
      status: opts.status === undefined ? undefined : statusRange(opts.status),
      path: opts.path,
    });
    return { items: rows.slice(0, opts.limit), more: rows.length > opts.limit };
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
