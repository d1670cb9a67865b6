import type { Logger } from '../log/logger.js';
import type { RequestLogService } from '../modules/account/logs/logs.service.js';
import type { Role } from './role.js';

// Ten batches a second rather than one: a batch is one insert on the API thread, and a second's worth
// (thousands of rows under load) held requests behind it long enough to double the p99 in the bench.
const FLUSH_MS = 100;

/** The API's request log lines (GET /v1/logs), written a batch every 100 ms, and the last ones at stop. */
export function startRequestLogs(logs: RequestLogService, logger: Logger, everyMs = FLUSH_MS): Role {
  let flushing: Promise<void> = Promise.resolve();
  const flush = () =>
    (flushing = flushing
      .then(() => logs.flush())
      .catch((e: unknown) => logger.warn({ err: e }, 'could not write request log lines')));
  const timer = setInterval(() => void flush(), everyMs);
  timer.unref();
  return {
    name: 'request-logs',
    async stop() {
      clearInterval(timer);
      await flush();
    },
  };
}
