import { mergeThreads, queueDepth, type threadMetrics } from '../../../log/metrics.js';
import type { Logger } from '../../../log/logger.js';
import type { Store } from '../../../store/store.js';
import { QUEUE_STATES, queueStateCounts } from '../../sending/emails/queue.repo.js';

export type ThreadValues = Awaited<ReturnType<typeof threadMetrics>>;

/**
 * GET /metrics: this thread's metrics, the queue's depth read now, and the
 * other threads' values (`others`, the background thread's in `serve`).
 */
export function metricsService(store: Store, logger: Logger, others: () => Promise<ThreadValues[]>) {
  return {
    async scrape(): Promise<{ contentType: string; text: string }> {
      try {
        const counts = await queueStateCounts(store.reader);
        // every state at 0 when no row is in it: a series that disappears reads as "no data", not as "empty"
        for (const state of new Set([...QUEUE_STATES, ...Object.keys(counts)]))
          queueDepth.set({ state }, counts[state] ?? 0);
      } catch (e) {
        // the rest of the metrics still say something; the gauge keeps its last values
        logger.warn({ err: e }, 'metrics: could not read the queue depth');
      }
      return mergeThreads(await others());
    },
  };
}

export type MetricsService = ReturnType<typeof metricsService>;
