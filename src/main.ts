import type { Config } from './config/load.js';
import type { Logger } from './log/logger.js';
import { systemClock, type Clock } from './lib/time.js';
import { openStore, type Store, type StoreOptions } from './store/store.js';
import { SharedDurability, WalSyncThread } from './store/shared-durability.js';
import { sqliteFile } from './store/sqlite.js';
import { buildCore, buildFanOut, egressOptions, USER_AGENT, type Core } from './core.js';
import { PACKAGE_VERSION } from './config/package-root.js';
import { lockDataDir } from './store/data-dir-lock.js';
import { recheckDomains } from './modules/domains/domains.service.js';
import { advanceRotations, describeRotation } from './modules/domains/dkim-rotation.service.js';
import { blocklistChecker, checkBlocklists, describeBlocklistRun } from './modules/blocklists/blocklists.service.js';
import { publicKeyFor } from './modules/domains/domains.repo.js';
import { purgeIdempotencyKeys } from './modules/emails/emails.service.js';
import { describePrune } from './modules/retention/retention.service.js';
import { firstStart, type FirstStart } from './modules/keys/first-start.js';
import { workerHandoff } from './mta/handoff.js';
import { LiveAttempt } from './mta/live-attempt.js';
import { RateLimiter } from './lib/rate-limiter.js';
import { createResolver } from './dns/resolver.js';
import { type ListenerOptions } from './smtp/listener.js';
import { startMxListener } from './smtp/mx-listener.js';
import { startSubmissionListener } from './smtp/submission.js';
import { SmtpSender } from './mta/smtp-sender.js';
import { startApi, type ApiListen, type ApiRole } from './roles/api.js';
import { startBackgroundThread } from './roles/background.js';
import { startDns } from './roles/dns.js';
import { startJobs } from './roles/jobs.js';
import { startFanOut } from './roles/broadcasts.js';
import { startKeyUsage } from './roles/key-usage.js';
import { startRequestLogs } from './roles/request-logs.js';
import { startMetricsListener } from './roles/metrics.js';
import { startThreadMetrics } from './log/metrics.js';
import { startMta, type MtaRole } from './roles/mta.js';
import type { Role } from './roles/role.js';
import { startSigning } from './roles/signing.js';
import { startWebhooks } from './roles/webhooks.js';
import { ListenHub } from './modules/webhooks/listen-hub.js';
import { deleteLeftoverListenEndpoints } from './modules/webhooks/listen.service.js';

// The composition root: config → store → dependencies and services
// (core.ts) → roles. The only place, with core.ts, that reads the whole
// config; every role gets its slice.

export interface Appliance {
  store: Store;
  api: ApiRole;
  firstStart: FirstStart | null;
  stop(): Promise<void>;
}

/** Which roles to run; `serve` runs all of them, over two threads; tests pick. */
export interface RoleSelection {
  api?: boolean;
  mta?: boolean;
  webhooks?: boolean;
  dns?: boolean;
  jobs?: boolean;
  /** the MX listener (smtp.inbound) */
  inbound?: boolean;
  /** SMTP submission (smtp.submission) */
  submission?: boolean;
}

export interface RunningRoles {
  api: ApiRole | null;
  /** the port of the DKIM zone server, when it runs */
  dnsPort: number | null;
  mta: MtaRole | null;
  /** the ports the SMTP listeners took (port 0 in the config picks a free one) */
  inboundPort: number | null;
  submissionPort: number | null;
  /** the port of /metrics when metrics.port gives it a listener of its own */
  metricsPort: number | null;
  stop(): Promise<void>;
}

interface Starting {
  config: Config;
  core: Core;
  listen: ApiListen;
  running: RunningRoles;
  /** every role started so far, stopped in reverse order */
  started: Role[];
}

/** The roles in the order they start (they stop in reverse); each picks its slice of the config. */
const ROLES: Array<[keyof RoleSelection, (s: Starting) => Promise<void>]> = [
  ['dns', startDnsRole],
  ['mta', startMtaRoles],
  ['webhooks', startWebhooksRole],
  ['jobs', startJobsRole],
  ['api', startApiRoles],
  ['inbound', startInboundRole],
  ['submission', startSubmissionRole],
];

/** Start the selected roles over a built core; stop() stops them in reverse order. */
export async function startRoles(config: Config, core: Core, select: RoleSelection, listen: ApiListen = config.http): Promise<RunningRoles> {
  const started: Role[] = [];
  const stopAll = async () => {
    for (const role of [...started].reverse()) {
      await role.stop().catch((e: unknown) => core.deps.logger.error({ err: e, role: role.name }, 'role did not stop cleanly'));
    }
  };
  const running: RunningRoles = { api: null, dnsPort: null, mta: null, inboundPort: null, submissionPort: null, metricsPort: null, stop: stopAll };
  // stopped last: every role may still hand it work while it stops
  started.push({ name: 'parsing', stop: () => core.parsing.close() });
  try {
    for (const [name, start] of ROLES) if (select[name]) await start({ config, core, listen, running, started });
    return running;
  } catch (e) {
    await stopAll();
    throw e;
  }
}

async function startDnsRole({ config, core, running, started }: Starting): Promise<void> {
  if (!config.dns.server.enabled) return;
  const { zone, server } = config.dns;
  const slice = { zone, nameserver: config.outbound.hostname, host: server.host, port: server.port, keyTtlSeconds: Math.ceil(config.dkim.keyTtlMs / 1000) };
  const dns = await startDns(slice, (token, selector) => publicKeyFor(core.deps.store.reader, token, selector), core.deps.logger);
  started.push(dns);
  running.dnsPort = dns.port;
}

async function startMtaRoles({ config, core, running, started }: Starting): Promise<void> {
  const { store, clock, logger, resolver, tracking } = core.deps;
  // stopped after the MTA
  const signing = startSigning(logger);
  started.push(signing);
  const { outbound } = config;
  const sender = new SmtpSender({ hostname: outbound.hostname, maxConnectionsPerDestination: outbound.maxConnectionsPerDomain, logger });
  const live = new LiveAttempt({ store, resolver, sender, outbound, tracking, signer: signing.signer });
  const mta = await startMta({ store, writer: core.writer, clock, logger, testDomain: config.testDomain, retryScheduleMs: outbound.retryScheduleMs, attemptLive: live.attempt, closeLive: () => sender.close() });
  started.push(mta);
  running.mta = mta;
  core.onWake('mta', () => mta.wake());
  core.setHandoff(workerHandoff(mta.worker));
}

async function startWebhooksRole({ config, core, started }: Starting): Promise<void> {
  const { webhooks } = config;
  const slice = { retryScheduleMs: webhooks.retryScheduleMs, timeoutMs: webhooks.timeoutMs, endpointConcurrency: webhooks.endpointConcurrency, concurrency: webhooks.concurrency, egress: egressOptions(config, core.deps.resolver, webhooks.timeoutMs), userAgent: USER_AGENT };
  const role = await startWebhooks(slice, { store: core.deps.store, writer: core.writer, clock: core.deps.clock, logger: core.deps.logger, listen: core.listenSink });
  started.push(role);
  core.onWake('dispatcher', () => role.dispatcher.wake());
}

async function startJobsRole({ config, core, started }: Starting): Promise<void> {
  const { store, clock, logger } = core.deps;
  const ttl = config.limits.idempotencyTtlMs;
  // one checker for the process: it keeps each list's answers for their TTL
  const blocklists = blocklistChecker(config.dns.resolvers, clock, config.blocklists.queriesPerSecond);
  const failedFor = (what: string) => (d: { name: string }, e: unknown) => logger.warn({ err: e, domain: d.name }, what);
  const jobs = [
    { name: 'domain_recheck', schedule: config.jobs.domainRecheck, run: async () => `${await recheckDomains(core.deps, failedFor('domain re-check failed'))} domain(s) changed status` },
    { name: 'idempotency_purge', schedule: '*/10 * * * *', run: async () => `${await purgeIdempotencyKeys(store, clock.now() - ttl)} key(s) purged` },
    { name: 'request_logs_prune', schedule: '17 * * * *', run: async () => `${await core.services.logs.prune(config.logs.retentionMs)} request log line(s) pruned` },
    { name: 'retention_prune', schedule: config.retention.schedule, run: async () => `${describePrune(await core.services.retention.prune())}; ${await core.services.forms.prunePending()} unconfirmed signup contact(s) deleted` },
    { name: 'dkim_rotation', schedule: config.dkim.schedule, run: async () => describeRotation(await advanceRotations(core.deps, failedFor('DKIM rotation step failed'))) },
    { name: 'blocklist_check', schedule: config.blocklists.schedule, run: async () => describeBlocklistRun(await checkBlocklists(core.deps, blocklists)) },
    { name: 'suppressions_prune', schedule: '29 * * * *', run: async () => `${await core.services.suppressions.pruneExpired()} expired suppression(s) deleted, ${await core.services.unsubscribe.pruneLinks()} old unsubscribe link(s)` },
  ];
  started.push(startJobs(jobs, logger));
  if (core.acceptQueue) started.push(startFanOut(buildFanOut(config, core, core.acceptQueue), clock, logger, (wake) => core.onWake('broadcasts', wake)));
}

async function startApiRoles({ config, core, listen, running, started }: Starting): Promise<void> {
  const { logger, clock } = core.deps;
  // started before the API, so that it stops after it: the last requests' key uses are written too
  started.push(startKeyUsage(core.deps.auth, logger));
  started.push(startRequestLogs(core.services.logs, logger));
  const metricsOnApi = config.metrics.port === null;
  if (!metricsOnApi) {
    const metrics = await startMetricsListener({ host: config.metrics.host, port: config.metrics.port! }, core.services.metrics, logger);
    started.push(metrics);
    running.metricsPort = metrics.port;
  }
  const edge = { requestsPerSecond: config.limits.requestsPerSecond, logger, clock, version: PACKAGE_VERSION, publicUrl: config.http.publicUrl, metrics: metricsOnApi };
  const api = await startApi(listen, core.services, edge, config.dashboard.enabled);
  started.push(api);
  running.api = api;
}

/** A client's name (smtp.reverse_dns) through dns.resolvers, one try of 1.5 s: a slow PTR answer delays every greeting; a client without one is served as [address]. */
const REVERSE_LOOKUP = { timeoutMs: 1500, tries: 1 };

/** What both SMTP listeners take from the config (without smtp.tls, each may make its certificate: smtp/self-signed-tls.ts). */
function listenerOptions(config: Config, core: Core, name: string, l: Config['smtp']['inbound']): ListenerOptions {
  const reverse = config.smtp.reverseDns ? createResolver({ servers: config.dns.resolvers, ...REVERSE_LOOKUP }) : null;
  const { smtp, outbound, dataDir } = config;
  return { name, host: l.host, port: l.port, hostname: outbound.hostname, tls: smtp.tls, secure: !!l.secure, dataDir, maxBytes: l.maxMessageBytes, maxClients: smtp.maxClients, limits: smtp.limits, reverse: reverse ? (ip) => reverse.reverse(ip) : null, logger: core.deps.logger };
}

async function startInboundRole({ config, core, running, started }: Starting): Promise<void> {
  if (!config.smtp.inbound.enabled) return;
  const mx = await startMxListener(listenerOptions(config, core, 'inbound', config.smtp.inbound), core.services.inbound);
  started.push({ name: 'inbound', stop: () => mx.close() });
  running.inboundPort = mx.port;
}

async function startSubmissionRole({ config, core, running, started }: Starting): Promise<void> {
  if (!config.smtp.submission.enabled) return;
  const { auth, emails } = core.services;
  const limiter = new RateLimiter(config.limits.requestsPerSecond, core.deps.clock);
  const sub = await startSubmissionListener(listenerOptions(config, core, 'submission', config.smtp.submission), { auth, emails, limiter, throttle: core.deps.authThrottle, read: (job) => core.parsing.run('submitted', job) });
  started.push({ name: 'submission', stop: () => sub.close() });
  running.submissionPort = sub.port;
}

/**
 * The store of each thread of a serving process (the API thread and the
 * background thread): one write lock and one fsync thread between them, and
 * a checkpointer each, since a checkpointer hears only of its own store's
 * commits (without one, SQLite checkpoints inside that store's commits), and
 * one storage state (store/storage-state.ts: is the disk full?).
 */
export function servingStoreOptions(config: Config, shared: Pick<StoreOptions, 'writeLock' | 'durability' | 'storage'>): StoreOptions {
  return { client: config.database.client, dataDir: config.dataDir, url: config.database.url, backgroundCheckpoints: true, ...shared };
}

export interface StartOptions {
  clock?: Clock;
  /**
   * Called at once when the first start created the default project's key,
   * before anything listens: the key must reach the operator even if a role
   * then fails to start, since it is never shown again.
   */
  announceFirstStart?(first: FirstStart): void;
  /** logs go to stderr (serve --json); the background thread needs to know */
  logToStderr?: boolean;
  /** a part the process cannot run without has died */
  onFatal?(reason: string): void;
}

/**
 * `posthorn serve`: this thread serves the API and the DNS zone; the MTA,
 * the webhook dispatcher, the jobs and the accept group commit run on the
 * background thread (roles/background.ts), over the same database.
 */
export async function startAppliance(config: Config, logger: Logger, opts: StartOptions = {}): Promise<Appliance> {
  const clock = opts.clock ?? systemClock;
  startThreadMetrics('api');
  const sqlite = config.database.client === 'sqlite';
  const unlock = sqlite ? lockDataDir(config.dataDir) : () => undefined;
  const writeLock = sqlite ? new SharedArrayBuffer(4) : undefined;
  // One fsync thread for the commits of both threads: links[0] here, links[1] for the background.
  // Without it nothing can be acknowledged: like the background thread, its death stops the process.
  const syncer = sqlite ? new WalSyncThread(`${sqliteFile(config.dataDir)}-wal`, 2, (e) => fatal(logger, opts, 'the fsync thread failed', e)) : null;
  const durability = syncer ? new SharedDurability(syncer.links[0]!) : undefined;
  let store: Store | null = null;
  const closeStore = async () => {
    await store?.close();
    await syncer?.stop();
    await durability?.close();
  };
  let stopBackground = async () => undefined as void;
  try {
    store = openStore(servingStoreOptions(config, { writeLock, durability, storage: { logger } }));
    const applied = await store.migrateLatest();
    if (applied.length) logger.info({ migrations: applied }, 'database migrated');
    const first = await firstStart(store, clock);
    if (first) opts.announceFirstStart?.(first);
    // `posthorn listen` streams are the API thread's (the background dispatcher writes there); none survives a restart
    if (sqlite) await deleteLeftoverListenEndpoints(store);
    const listenHub = new ListenHub(logger);
    const bg = await startBackgroundThread({ config, writeLock, durability: syncer?.links[1], storage: store.storage.buffer, logToStderr: opts.logToStderr ?? false }, logger, (reason) => opts.onFatal?.(reason), durability ?? null, (id, frame) => listenHub.deliver(id, frame));
    stopBackground = () => bg.stop();
    const core = buildCore(config, store, logger, clock, { accept: bg.accept, listenHub });
    for (const role of ['mta', 'dispatcher', 'broadcasts'] as const) core.onWake(role, () => bg.wake(role));
    core.setOtherThreads(() => bg.metrics());
    core.services.logs.sendTo((batch) => bg.requestLogs(batch));
    const running = await startRoles(config, core, { api: true, dns: true, inbound: true, submission: true });
    return {
      store,
      api: running.api!,
      firstStart: first,
      async stop() {
        await running.stop();
        await bg.stop();
        await closeStore();
        unlock();
        logger.info('stopped');
      },
    };
  } catch (e) {
    await stopBackground().catch(() => undefined);
    await closeStore().catch(() => undefined);
    unlock();
    throw e;
  }
}

function fatal(logger: Logger, opts: StartOptions, what: string, e: Error): void {
  logger.fatal({ err: e }, what);
  opts.onFatal?.(`${what}: ${e.message}`);
}
