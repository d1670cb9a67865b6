import {
  mergeThreads,
  providerQueued,
  providerRate,
  providerSuspended,
  queueDepth,
  type threadMetrics,
} from '../../../log/metrics.js';
import type { Logger } from '../../../log/logger.js';
import type { Store } from '../../../store/store.js';
import { QUEUE_STATES } from '../../sending/emails/queue.repo.js';
import { queueStateCounts } from '../../sending/emails/queue-counts.repo.js';
import { queuedByProvider, recentLanes } from '../../deliverability/shaping/shaping.repo.js';

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
      await shapingGauges(store, logger);
      return mergeThreads(await others());
    },
  };
}

/**
 * The traffic-shaping lanes of the last day as gauges. Providers of the table keep their name;
 * the rest, named after MX hosts' domains, are summed as 'other', so that the series stay few.
 */
async function shapingGauges(store: Store, logger: Logger): Promise<void> {
  try {
    const now = Date.now();
    const [lanes, queued] = await Promise.all([
      recentLanes(store.reader, now - 86_400_000),
      queuedByProvider(store.reader),
    ]);
    const known = new Set(lanes.filter((l) => l.known).map((l) => l.provider));
    providerSuspended.reset();
    providerRate.reset();
    providerQueued.reset();
    for (const l of lanes) {
      const labels = { provider: l.known ? l.provider : 'other', source_ip: l.sourceIp };
      const suspended = l.state === 'suspended' && (l.untilAt ?? 0) > now ? 1 : 0;
      if (l.known) providerSuspended.set(labels, suspended);
      else providerSuspended.inc(labels, suspended);
      if (l.known && l.ratePerMinute !== null) providerRate.set(labels, l.ratePerMinute);
    }
    for (const [provider, n] of queued) providerQueued.inc({ provider: known.has(provider) ? provider : 'other' }, n);
  } catch (e) {
    logger.warn({ err: e }, 'metrics: could not read the traffic-shaping state');
  }
}

export type MetricsService = ReturnType<typeof metricsService>;
