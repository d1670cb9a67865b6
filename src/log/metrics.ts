import { monitorEventLoopDelay } from 'node:perf_hooks';
import {
  AggregatorRegistry,
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
  type MetricObjectWithValues,
  type MetricValue,
} from 'prom-client';

// The appliance's Prometheus metrics (GET /metrics). Each thread counts in
// its own registry (a registry is a module of its thread); the API thread
// asks the background thread for its values at scrape time and merges them
// (mergeThreads), each series labelled with its thread. Labels carry route
// templates, statuses, outcomes and reasons: never a project, an address
// or anything else a customer sent.

export const registry = new Registry();

export type ThreadName = 'api' | 'background';

/**
 * prom-client's default gauges named like counters: a gauge must not end in
 * `_total` (`promtool check metrics` refuses them). Each is the sum of a
 * default gauge that stays, by type: `sum(nodejs_active_handles)` and so on.
 */
const GAUGES_NAMED_LIKE_COUNTERS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** Called once per thread at start: names the thread's series; process-wide metrics come from the API thread only. */
export function startThreadMetrics(thread: ThreadName): void {
  registry.setDefaultLabels({ thread });
  // a second appliance in one process (tests) counts on the same registry
  if (started) return;
  started = true;
  if (thread === 'api') {
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });
    for (const name of GAUGES_NAMED_LIKE_COUNTERS) registry.removeSingleMetric(name);
  }
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

const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/** A metric's values as prom-client's registries read and merge them (what getMetricsAsJSON gives). */
interface MetricJson {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: Array<{ value: number; labels: Record<string, string | number>; metricName?: string }>;
}

interface RequestSeries {
  method: string;
  route: string;
  byStatus: Map<number, number>;
  /** per bucket, not cumulative; the last one is +Inf */
  buckets: number[];
  sum: number;
  count: number;
}

/**
 * Requests by route template and status, and their durations: counted in
 * plain numbers per (method, route) and turned into prom-client's values only
 * at scrape time. A prom-client counter and histogram with labels cost the
 * API thread about 8 µs a request (they key their series by sorting and
 * joining the labels at every call), a tenth of an accepted email's time.
 */
class RequestMetrics {
  private readonly series = new Map<string, RequestSeries>();

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route}`;
    let s = this.series.get(key);
    if (!s) {
      s = {
        method,
        route,
        byStatus: new Map(),
        buckets: new Array<number>(DURATION_BUCKETS.length + 1).fill(0),
        sum: 0,
        count: 0,
      };
      this.series.set(key, s);
    }
    s.byStatus.set(status, (s.byStatus.get(status) ?? 0) + 1);
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]) i++;
    s.buckets[i]++;
    s.sum += seconds;
    s.count++;
  }

  counter(): MetricJson {
    const values = [...this.series.values()].flatMap((s) =>
      [...s.byStatus].map(([status, value]) => ({
        value,
        labels: { method: s.method, route: s.route, status: String(status) },
      })),
    );
    return {
      name: 'posthorn_http_requests_total',
      help: 'API requests by route template and status',
      type: 'counter',
      values,
      aggregator: 'sum',
    };
  }

  histogram(): MetricJson {
    const name = 'posthorn_http_request_duration_seconds';
    const values = [...this.series.values()].flatMap((s) => {
      const labels = { method: s.method, route: s.route };
      let cumulative = 0;
      const buckets = s.buckets.map((n, i) => {
        cumulative += n;
        return {
          value: cumulative,
          labels: { ...labels, le: i < DURATION_BUCKETS.length ? DURATION_BUCKETS[i] : '+Inf' },
          metricName: `${name}_bucket`,
        };
      });
      return [
        ...buckets,
        { value: s.sum, labels, metricName: `${name}_sum` },
        { value: s.count, labels, metricName: `${name}_count` },
      ];
    });
    return { name, help: 'API request duration by route template', type: 'histogram', values, aggregator: 'sum' };
  }
}

export const httpRequests = new RequestMetrics();
// prom-client takes any object that answers get() with its values
for (const get of [() => httpRequests.counter(), () => httpRequests.histogram()]) {
  const { name, help, type } = get();
  registry.registerMetric({ name, help, type, aggregator: 'sum', get: async () => get() } as never);
}

export const acceptCommits = new Counter({
  name: 'posthorn_accept_commits_total',
  help: 'group commits of accepted emails (each one fsync)',
  registers: [registry],
});

export const transientRetries = new Counter({
  name: 'posthorn_db_retries_total',
  help: "transactions (or a group commit's jobs) run again at once after a transient failure: deadlock, serialization, busy",
  labelNames: ['reason'] as const,
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
export async function mergeThreads(
  others: Array<MetricObjectWithValues<MetricValue<string>>[]>,
): Promise<{ contentType: string; text: string }> {
  const merged = AggregatorRegistry.aggregate([await registry.getMetricsAsJSON(), ...others]);
  return { contentType: registry.contentType, text: await merged.metrics() };
}

export const authFailures = new Counter({
  name: 'posthorn_auth_failures_total',
  help: 'failed authentications (a wrong, unknown or revoked key) by where: api, dashboard, submission',
  labelNames: ['listener'] as const,
  registers: [registry],
});

export const authRefusals = new Counter({
  name: 'posthorn_auth_refusals_total',
  help: 'tries refused without a look at the key, because their client address failed too often (limits.auth_failures_per_ip)',
  labelNames: ['listener'] as const,
  registers: [registry],
});

export const smtpDrops = new Counter({
  name: 'posthorn_smtp_sessions_dropped_total',
  help: 'SMTP sessions the listeners closed by a limit: session_timeout, data_timeout, min_data_rate, hard_error_limit, clients_per_ip, auth_failures',
  labelNames: ['listener', 'limit'] as const,
  registers: [registry],
});

export const parseJobs = new Counter({
  name: 'posthorn_parse_jobs_total',
  help: 'untrusted inputs parsed on the worker pool by task and outcome: ok, refused (the input broke a limit), over_budget (the worker was stopped), failed',
  labelNames: ['task', 'outcome'] as const,
  registers: [registry],
});

export const dnsPacketsDropped = new Counter({
  name: 'posthorn_dns_packets_dropped_total',
  help: "DNS messages the DKIM zone's server dropped unread by reason (short, oversize, response, opcode, qdcount, counts, records, name, malformed), and TCP connections refused over the cap (tcp_connections)",
  labelNames: ['reason'] as const,
  registers: [registry],
});

export const shapedMessages = new Counter({
  name: 'posthorn_mta_provider_messages_total',
  help: "outbound messages by mailbox provider (the built-in and configured ones; 'other' for the rest) and outcome: delivered, deferred, bounced, throttled (a reply that suspended the provider)",
  labelNames: ['provider', 'outcome'] as const,
  registers: [registry],
});

/** Traffic-shaping state is read from the database at scrape time, like the queue depth. */
export const providerSuspended = new Gauge({
  name: 'posthorn_mta_provider_suspended',
  help: "1 while a provider has suspended mail from a source IP after a throttling reply (source_ip '' : the system's address)",
  labelNames: ['provider', 'source_ip'] as const,
  registers: [registry],
});

export const providerRate = new Gauge({
  name: 'posthorn_mta_provider_rate_per_minute',
  help: 'messages per minute allowed to a provider from a source IP while it climbs back after a suspension; absent when no limit applies',
  labelNames: ['provider', 'source_ip'] as const,
  registers: [registry],
});

export const providerQueued = new Gauge({
  name: 'posthorn_mta_provider_queued',
  help: 'queue rows waiting for each mailbox provider',
  labelNames: ['provider'] as const,
  registers: [registry],
});
