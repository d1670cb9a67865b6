import { monitorEventLoopDelay } from 'node:perf_hooks';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';

// The appliance's Prometheus metrics (GET /metrics). Each thread counts in
// its own registry (a registry is a module of its thread); the API thread
// asks the background thread for its values at scrape time and merges them
// (mergeThreads), each series labelled with its thread. Labels carry route
// templates, statuses, outcomes and reasons: never a project, an address
// or anything else a customer sent.

export const registry = new Registry();

export type ThreadName = 'api' | 'background';

/** Called once per thread at start: names the thread's series; process-wide metrics come from the API thread only. */
export function startThreadMetrics(thread: ThreadName): void {
  registry.setDefaultLabels({ thread });
  // a second appliance in one process (tests) counts on the same registry
  if (started) return;
  started = true;
  if (thread === 'api') collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });
  lag.enable();
}

let started = false;
const lag = monitorEventLoopDelay({ resolution: 20 });

new Gauge({
  name: 'posthorn_event_loop_lag_p99_seconds',
  help: "99th percentile of this thread's event-loop delay since the previous scrape",
  registers: [registry],
  collect() {
    this.set(lag.count ? lag.percentile(99) / 1e9 : 0);
    lag.reset();
  },
});

export const httpRequests = new Counter({
  name: 'posthorn_http_requests_total',
  help: 'API requests by route template and status',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});

export const httpDuration = new Histogram({
  name: 'posthorn_http_request_duration_seconds',
  help: 'API request duration by route template',
  labelNames: ['method', 'route'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
  registers: [registry],
});

export const acceptCommits = new Counter({
  name: 'posthorn_accept_commits_total',
  help: 'group commits of accepted emails (each one fsync)',
  registers: [registry],
});

export const acceptBatchSize = new Histogram({
  name: 'posthorn_accept_batch_size',
  help: 'emails stored per accept commit',
  buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
  registers: [registry],
});

export const deliveries = new Counter({
  name: 'posthorn_deliveries_total',
  help: "recipients' delivery outcomes (delivered, deferred, bounced, ambiguous, …) by bounce reason where there is one",
  labelNames: ['outcome', 'reason'] as const,
  registers: [registry],
});

export const smtpSessions = new Gauge({
  name: 'posthorn_smtp_sessions_open',
  help: 'SMTP sessions open on the inbound and submission listeners',
  labelNames: ['listener'] as const,
  registers: [registry],
});

export const webhookAttempts = new Counter({
  name: 'posthorn_webhook_attempts_total',
  help: 'webhook POSTs by outcome: success (2xx), failure (another status), error (no answer)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const dnsChecks = new Counter({
  name: 'posthorn_dns_record_checks_total',
  help: "sending domains' DNS record checks by result: found, missing, mismatch, error (DNS did not answer)",
  labelNames: ['result'] as const,
  registers: [registry],
});

/** Queue depth is read from the database at scrape time by whoever can (the API thread): set here. */
export const queueDepth = new Gauge({
  name: 'posthorn_queue_depth',
  help: 'outbound queue rows by state',
  labelNames: ['state'] as const,
  registers: [registry],
});

/** This thread's values, to send to the thread that answers the scrape. */
export const threadMetrics = (): Promise<MetricObjectWithValues<MetricValue<string>>[]> => registry.getMetricsAsJSON();

/** The Prometheus text of this thread's registry merged with other threads' values. */
export async function mergeThreads(others: Array<MetricObjectWithValues<MetricValue<string>>[]>): Promise<{ contentType: string; text: string }> {
  const merged = AggregatorRegistry.aggregate([await registry.getMetricsAsJSON(), ...others]);
  return { contentType: registry.contentType, text: await merged.metrics() };
}
