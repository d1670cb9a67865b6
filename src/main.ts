import { readFileSync } from 'node:fs';
import type { Config } from './config/load.js';
import type { Logger } from './log/logger.js';
import { validationError } from './lib/errors.js';
import { PACKAGE_VERSION } from './lib/package-root.js';
import { systemClock, type Clock } from './lib/time.js';
import type { Services } from './api/services.js';
import { createResolver, type DnsResolver } from './dns/resolver.js';
import { openStore, sqliteFile, type Store, type StoreOptions } from './store/store.js';
import { SharedDurability, WalSyncThread } from './store/shared-durability.js';
import { GroupCommit } from './store/group-commit.js';
import { lockDataDir } from './store/data-dir-lock.js';
import { domainSettings } from './modules/domains/domain-settings.js';
import { domainService, recheckDomains, type DomainSettings } from './modules/domains/domains.service.js';
import { publicKeyFor } from './modules/domains/domains.repo.js';
import { AcceptQueue, type AcceptHandoff, type Acceptor } from './modules/emails/accept-batch.js';
import { EmailService, purgeIdempotencyKeys, type AttachmentFetcher } from './modules/emails/emails.service.js';
import { healthService } from './modules/health/health.service.js';
import { firstStart, type FirstStart } from './modules/keys/first-start.js';
import { KeyAuthenticator, keyService } from './modules/keys/keys.service.js';
import { trackingKey, trackingService, type TrackingDeps } from './modules/tracking/tracking.service.js';
import { webhookService } from './modules/webhooks/webhooks.service.js';
import { checkUrl, guardedRequest, resolverLookup, type EgressOptions } from './net/egress.js';
import { workerHandoff } from './mta/handoff.js';
import { LiveAttempt } from './mta/live-attempt.js';
import { SmtpSender } from './mta/smtp-sender.js';
import { startApi, type ApiListen, type ApiRole } from './roles/api.js';
import { startBackgroundThread } from './roles/background.js';
import { startDns } from './roles/dns.js';
import { startJobs } from './roles/jobs.js';
import { startKeyUsage } from './roles/key-usage.js';
import { startMta, type MtaRole } from './roles/mta.js';
import type { Role } from './roles/role.js';
import { startSigning } from './roles/signing.js';
import { startWebhooks } from './roles/webhooks.js';

// The composition root: config → store → dependencies → services → roles.
// The only place that reads the whole config; every role gets its slice.

export interface Appliance {
  store: Store;
  api: ApiRole;
  firstStart: FirstStart | null;
  stop(): Promise<void>;
}

const USER_AGENT = `Posthorn/${PACKAGE_VERSION} (+webhooks)`;

/** Every outgoing request to a user-given URL goes through this (CONTRACT §4: allow_private, ca_file, resolvers). */
export function egressOptions(config: Config, resolver: DnsResolver, timeoutMs: number): EgressOptions {
  return {
    allowPrivate: config.network.allowPrivate,
    ca: config.webhooks.caFile ? readFileSync(config.webhooks.caFile) : null,
    resolve: resolverLookup(resolver),
    timeoutMs,
    userAgent: USER_AGENT,
  };
}

/** What the services and the roles of one thread are built from. */
export interface CoreDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  resolver: DnsResolver;
  tracking: TrackingDeps;
  domains: DomainSettings;
  auth: KeyAuthenticator;
}

export interface Core {
  deps: CoreDeps;
  services: Services;
  /** the accept group commit built here; null when another thread's was passed in */
  acceptQueue: AcceptQueue | null;
  writer: GroupCommit;
  wakeMta(): void;
  wakeDispatcher(): void;
  /** set by the roles that want to hear about new work */
  onMtaWake(fn: () => void): void;
  onDispatcherWake(fn: () => void): void;
  /** the MTA started in this thread: the accept claims live mail due now for it */
  setHandoff(h: AcceptHandoff): void;
}

/** The dependencies and services of one thread, shared by `serve` and the tests. */
export function buildCore(config: Config, store: Store, logger: Logger, clock: Clock = systemClock, opts: { accept?: Acceptor } = {}): Core {
  const writer = new GroupCommit(store);
  const resolver = createResolver({ servers: config.dns.resolvers });
  const wake = { mta: () => undefined as void, dispatcher: () => undefined as void };
  let handoff: AcceptHandoff | null = null;
  // `serve` passes the relay to the background thread's queue; tests and the background thread itself use their own
  const acceptQueue = opts.accept ? null : new AcceptQueue(store, clock, logger, {
    hostname: config.outbound.hostname,
    routeOf: (environment, address) => (environment === 'live' && config.outbound.mode === 'direct' ? address.slice(address.lastIndexOf('@') + 1) : ''),
    testDomain: config.testDomain,
    idempotencyTtlMs: config.limits.idempotencyTtlMs,
    onStored: () => wake.mta(),
    handoff: () => handoff,
    writer,
  });
  const deps: CoreDeps = {
    store,
    clock,
    logger,
    resolver,
    tracking: { store, clock, publicUrl: config.http.publicUrl, key: trackingKey(store) },
    domains: domainSettings(config),
    auth: new KeyAuthenticator({ store, clock }),
  };
  return {
    deps,
    services: buildServices(config, deps, opts.accept ?? acceptQueue!, () => wake.dispatcher()),
    acceptQueue,
    writer,
    wakeMta: () => wake.mta(),
    wakeDispatcher: () => wake.dispatcher(),
    onMtaWake: (fn) => void (wake.mta = fn),
    onDispatcherWake: (fn) => void (wake.dispatcher = fn),
    setHandoff: (h) => void (handoff = h),
  };
}

function buildServices(config: Config, deps: CoreDeps, accept: Acceptor, wakeDispatcher: () => void): Services {
  const { store, clock, logger, resolver } = deps;
  const egress = egressOptions(config, resolver, 30_000);
  return {
    auth: deps.auth,
    emails: new EmailService({ store, clock, accept, fetchAttachment: attachmentFetcher(egress), idempotencyTtlMs: config.limits.idempotencyTtlMs }),
    domains: domainService({ store, clock, resolver, domains: deps.domains }),
    webhooks: webhookService({
      store,
      clock,
      checkEndpointUrl: async (url) => void (await checkUrl(url, { allowPrivate: config.network.allowPrivate, resolve: egress.resolve })),
      firstAttemptDelayMs: config.webhooks.retryScheduleMs[0] ?? 0,
      onQueued: wakeDispatcher,
    }),
    keys: keyService({ store, clock }, deps.auth),
    health: healthService(store, logger),
    tracking: trackingService(deps.tracking, logger),
  };
}

/** Attachments by `path` come through the SSRF guard; a failure names the field. */
function attachmentFetcher(egress: EgressOptions): AttachmentFetcher {
  return async (url, field, maxBytes) => {
    try {
      const res = await guardedRequest(url, { method: 'GET', maxBodyBytes: maxBytes }, egress);
      if (res.status < 200 || res.status > 299) throw new Error(`the server answered HTTP ${res.status}`);
      return { content: res.body, contentType: res.headers['content-type']?.split(';')[0]?.trim() || null };
    } catch (e) {
      throw validationError(field, `could not be downloaded: ${(e as Error).message}`);
    }
  };
}

/** Which roles to run; `serve` runs all of them, over two threads; tests pick. */
export interface RoleSelection {
  api?: boolean;
  mta?: boolean;
  webhooks?: boolean;
  dns?: boolean;
  jobs?: boolean;
}

export interface RunningRoles {
  api: ApiRole | null;
  /** the port of the DKIM zone server, when it runs */
  dnsPort: number | null;
  mta: MtaRole | null;
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
];

/** Start the selected roles over a built core; stop() stops them in reverse order. */
export async function startRoles(config: Config, core: Core, select: RoleSelection, listen: ApiListen = config.http): Promise<RunningRoles> {
  const started: Role[] = [];
  const stopAll = async () => {
    for (const role of [...started].reverse()) {
      await role.stop().catch((e: unknown) => core.deps.logger.error({ err: e, role: role.name }, 'role did not stop cleanly'));
    }
  };
  const running: RunningRoles = { api: null, dnsPort: null, mta: null, stop: stopAll };
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
  const dns = await startDns({ zone, nameserver: config.outbound.hostname, host: server.host, port: server.port }, (token, selector) => publicKeyFor(core.deps.store.reader, token, selector), core.deps.logger);
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
  core.onMtaWake(() => mta.wake());
  core.setHandoff(workerHandoff(mta.worker));
}

async function startWebhooksRole({ config, core, started }: Starting): Promise<void> {
  const { webhooks } = config;
  const slice = { retryScheduleMs: webhooks.retryScheduleMs, timeoutMs: webhooks.timeoutMs, egress: egressOptions(config, core.deps.resolver, webhooks.timeoutMs), userAgent: USER_AGENT };
  const role = await startWebhooks(slice, { store: core.deps.store, writer: core.writer, clock: core.deps.clock, logger: core.deps.logger });
  started.push(role);
  core.onDispatcherWake(() => role.dispatcher.wake());
}

async function startJobsRole({ config, core, started }: Starting): Promise<void> {
  const { store, clock, logger } = core.deps;
  const ttl = config.limits.idempotencyTtlMs;
  const jobs = [
    {
      name: 'domain_recheck',
      schedule: config.jobs.domainRecheck,
      run: async () => `${await recheckDomains(core.deps, (d, e) => logger.warn({ err: e, domain: d.name }, 'domain re-check failed'))} domain(s) changed status`,
    },
    { name: 'idempotency_purge', schedule: '*/10 * * * *', run: async () => `${await purgeIdempotencyKeys(store, clock.now() - ttl)} key(s) purged` },
  ];
  started.push(startJobs(jobs, logger));
}

async function startApiRoles({ config, core, listen, running, started }: Starting): Promise<void> {
  const { logger, clock } = core.deps;
  // started before the API, so that it stops after it: the last requests' key uses are written too
  started.push(startKeyUsage(core.deps.auth, logger));
  const api = await startApi(listen, core.services, { requestsPerSecond: config.limits.requestsPerSecond, logger, clock });
  started.push(api);
  running.api = api;
}

/**
 * The store of each thread of a serving process (the API thread and the
 * background thread): one write lock and one fsync thread between them, and
 * a checkpointer each, since a checkpointer hears only of its own store's
 * commits (without one, SQLite checkpoints inside that store's commits).
 */
export function servingStoreOptions(config: Config, shared: { writeLock?: SharedArrayBuffer | undefined; durability?: SharedDurability | undefined }): StoreOptions {
  return {
    client: config.database.client,
    dataDir: config.dataDir,
    url: config.database.url,
    backgroundCheckpoints: true,
    ...(shared.writeLock ? { writeLock: shared.writeLock } : {}),
    ...(shared.durability ? { durability: shared.durability } : {}),
  };
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
    store = openStore(servingStoreOptions(config, { writeLock, durability }));
    const applied = await store.migrateLatest();
    if (applied.length) logger.info({ migrations: applied }, 'database migrated');
    const first = await firstStart(store, clock);
    if (first) opts.announceFirstStart?.(first);
    const bg = await startBackgroundThread({ config, writeLock, durability: syncer?.links[1], logToStderr: opts.logToStderr ?? false }, logger, (reason) => opts.onFatal?.(reason), durability ?? null);
    stopBackground = () => bg.stop();
    const core = buildCore(config, store, logger, clock, { accept: bg.accept });
    core.onMtaWake(() => bg.wake('mta'));
    core.onDispatcherWake(() => bg.wake('dispatcher'));
    const running = await startRoles(config, core, { api: true, dns: true });
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
