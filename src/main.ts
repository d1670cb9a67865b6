import { readFileSync } from 'node:fs';
import type { Config } from './config/load.js';
import type { Logger } from './log/logger.js';
import { validationError } from './lib/errors.js';
import { PACKAGE_VERSION } from './lib/package-root.js';
import { systemClock, type Clock } from './lib/time.js';
import { openStore, sqliteFile, type Store, type StoreOptions } from './store/store.js';
import { SharedDurability, WalSyncThread } from './store/shared-durability.js';
import { GroupCommit } from './store/group-commit.js';
import { lockDataDir } from './store/data-dir-lock.js';
import { KeyAuthenticator } from './modules/keys/keys.service.js';
import { createResolver, type DnsResolver } from './dns/resolver.js';
import { recheckDomains } from './modules/domains/domains.service.js';
import { domainSettings } from './modules/domains/domain-settings.js';
import { publicKeyFor } from './modules/domains/domains.repo.js';
import { AcceptQueue, type Acceptor, type QueueHandoff } from './modules/emails/accept.js';
import { trackingKey } from './modules/tracking/tracking.service.js';
import type { AttachmentFetcher } from './modules/emails/emails.service.js';
import { purgeIdempotencyKeys } from './modules/emails/idempotency.js';
import { firstStart, type FirstStart } from './modules/projects/bootstrap.js';
import type { ApiDeps } from './api/deps.js';
import { checkUrl, closeEgressAgents, guardedRequest, resolverLookup, type EgressOptions } from './net/egress.js';
import { startZoneServer } from './dns/zone-server.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { createLiveAttempt } from './mta/live-attempt.js';
import { startSigningThread } from './mta/signing-pool.js';
import { SmtpSender } from './mta/smtp-sender.js';
import { startApi, type ApiRole } from './roles/api.js';
import { startJobs } from './roles/jobs.js';
import { startMta, type MtaRole } from './roles/mta.js';
import type { Role } from './roles/role.js';
import { startBackgroundThread, type BackgroundThread } from './roles/background.js';

export interface Appliance {
  store: Store;
  api: ApiRole;
  firstStart: FirstStart | null;
  stop(): Promise<void>;
}

const LAST_USED_FLUSH_MS = 5_000;
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

export interface Core {
  deps: ApiDeps;
  /** the accept group commit built here; null when another thread's was passed in */
  acceptQueue: AcceptQueue | null;
  writer: GroupCommit;
  /** set by the roles that want to hear about new work */
  wakeMta(): void;
  wakeDispatcher(): void;
  onMtaWake(fn: () => void): void;
  onDispatcherWake(fn: () => void): void;
  /** the queue worker started in this thread: the accept queue claims live mail due now for it */
  setQueueHandoff(h: QueueHandoff): void;
}

/** The dependencies of the API and the roles, shared by `serve` and the tests. */
export function buildCore(config: Config, store: Store, logger: Logger, clock: Clock = systemClock, opts: { accept?: Acceptor } = {}): Core {
  const writer = new GroupCommit(store);
  const resolver = createResolver({ servers: config.dns.resolvers });
  const egress = egressOptions(config, resolver, 30_000);
  let mtaWake = () => undefined as void;
  let dispatcherWake = () => undefined as void;
  let handoff: QueueHandoff | null = null;
  const fetchAttachment: AttachmentFetcher = async (url, field, maxBytes) => {
    try {
      const res = await guardedRequest(url, { method: 'GET', maxBodyBytes: maxBytes }, egress);
      if (res.status < 200 || res.status > 299) throw new Error(`the server answered HTTP ${res.status}`);
      return { content: res.body, contentType: res.headers['content-type']?.split(';')[0]?.trim() || null };
    } catch (e) {
      throw validationError(field, `could not be downloaded: ${(e as Error).message}`);
    }
  };
  // `serve` passes the relay to the background thread's queue; tests and the background thread itself use their own
  const acceptQueue = opts.accept ? null : new AcceptQueue(store, clock, logger, {
    hostname: config.outbound.hostname,
    routeOf: (environment, address) => (environment === 'live' && config.outbound.mode === 'direct' ? address.slice(address.lastIndexOf('@') + 1) : ''),
    onStored: () => mtaWake(),
    handoff: () => handoff,
    writer,
    testDomain: config.testDomain,
  });
  const accept = opts.accept ?? acceptQueue!;
  const deps: ApiDeps = {
    tracking: { store, clock, publicUrl: config.http.publicUrl, key: trackingKey(store) },
    config,
    store,
    clock,
    logger,
    auth: new KeyAuthenticator({ store, clock }),
    resolver,
    domains: domainSettings(config),
    emails: { store, clock, accept, fetchAttachment, idempotencyTtlMs: config.limits.idempotencyTtlMs },
    webhooks: {
      store,
      clock,
      checkEndpointUrl: async (url) => {
        await checkUrl(url, { allowPrivate: config.network.allowPrivate, resolve: egress.resolve });
      },
      firstAttemptDelayMs: config.webhooks.retryScheduleMs[0] ?? 0,
      onQueued: () => dispatcherWake(),
    },
  };
  return {
    deps,
    acceptQueue,
    writer,
    wakeMta: () => mtaWake(),
    wakeDispatcher: () => dispatcherWake(),
    onMtaWake: (fn) => {
      mtaWake = fn;
    },
    onDispatcherWake: (fn) => {
      dispatcherWake = fn;
    },
    setQueueHandoff: (h) => {
      handoff = h;
    },
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

/** Which roles to run; `serve` runs all of them, tests pick. */
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
  dispatcher: WebhookDispatcher | null;
  stop(): Promise<void>;
}

/** Start the selected roles over a built core; stop() stops them in reverse order. */
export async function startRoles(config: Config, core: Core, logger: Logger, clock: Clock, select: RoleSelection, listen: { host: string; port: number } = config.http): Promise<RunningRoles> {
  const { deps, writer } = core;
  const { store } = deps;
  const roles: Role[] = [];
  let dnsPort: number | null = null;
  const stopAll = async () => {
    for (const role of [...roles].reverse()) {
      await role.stop().catch((e: unknown) => logger.error({ err: e, role: role.name }, 'role did not stop cleanly'));
    }
  };
  try {
    if (select.dns && config.dns.server.enabled) {
      const zone = await startZoneServer({
        zone: config.dns.zone,
        nameserver: config.outbound.hostname,
        host: config.dns.server.host,
        port: config.dns.server.port,
        lookup: (token, selector) => publicKeyFor(store.reader, token, selector),
        logger,
      });
      logger.info({ zone: config.dns.zone, port: zone.port }, 'DKIM zone DNS server listening');
      dnsPort = zone.port;
      roles.push({ name: 'dns', stop: () => zone.stop() });
    }
    let mta: MtaRole | null = null;
    if (select.mta) {
      const signer = startSigningThread(logger);
      // stopped after the MTA (roles stop in reverse order)
      roles.push({ name: 'signing', stop: () => signer.close() });
      const sender = new SmtpSender({ hostname: config.outbound.hostname, maxConnectionsPerDestination: config.outbound.maxConnectionsPerDomain, logger });
      mta = await startMta({
        store,
        writer,
        clock,
        logger,
        testDomain: config.testDomain,
        retryScheduleMs: config.outbound.retryScheduleMs,
        attemptLive: createLiveAttempt({ store, resolver: deps.resolver, sender, outbound: config.outbound, tracking: deps.tracking, logger, signer }),
        closeLive: () => sender.close(),
      });
      const m = mta;
      core.onMtaWake(() => m.wake());
      core.setQueueHandoff(m.worker);
      roles.push(mta);
    }
    let dispatcher: WebhookDispatcher | null = null;
    if (select.webhooks) {
      const egress = egressOptions(config, deps.resolver, config.webhooks.timeoutMs);
      const d = new WebhookDispatcher({
        store,
        writer,
        clock,
        logger,
        owner: `webhooks:${process.pid}`,
        retryScheduleMs: config.webhooks.retryScheduleMs,
        requestTimeoutMs: config.webhooks.timeoutMs,
        userAgent: USER_AGENT,
        post: async (url, headers, body, signal) => {
          const res = await guardedRequest(url, { method: 'POST', headers, body, signal }, egress);
          return { status: res.status, durationMs: res.durationMs };
        },
      });
      await d.start();
      dispatcher = d;
      core.onDispatcherWake(() => d.wake());
      roles.push({
        name: 'webhooks',
        stop: async () => {
          await d.stop();
          await closeEgressAgents();
        },
      });
    }
    if (select.jobs) {
      roles.push(
        startJobs(
          [
            {
              name: 'domain_recheck',
              schedule: config.jobs.domainRecheck,
              run: async () => `${await recheckDomains(deps, (d, e) => logger.warn({ err: e, domain: d.name }, 'domain re-check failed'))} domain(s) changed status`,
            },
            {
              name: 'idempotency_purge',
              schedule: '*/10 * * * *',
              run: async () => `${await purgeIdempotencyKeys(store, clock.now() - config.limits.idempotencyTtlMs)} key(s) purged`,
            },
          ],
          logger,
        ),
      );
    }
    let api: ApiRole | null = null;
    if (select.api) {
      api = await startApi(deps, listen);
      roles.push(api);
      const flushTimer = setInterval(() => {
        deps.auth.flushLastUsed().catch((e: unknown) => logger.warn({ err: e }, 'could not record key last-used times'));
      }, LAST_USED_FLUSH_MS);
      flushTimer.unref();
      roles.push({ name: 'key-usage', stop: async () => clearInterval(flushTimer) });
    }
    return {
      api,
      dnsPort,
      mta,
      dispatcher,
      async stop() {
        await stopAll();
        await deps.auth.flushLastUsed().catch(() => undefined);
      },
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
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

/**
 * The composition root: config → store → dependencies → roles. The only
 * place that sees the whole config; every role gets its slice.
 */
export async function startAppliance(config: Config, logger: Logger, opts: StartOptions = {}): Promise<Appliance> {
  const clock = opts.clock ?? systemClock;
  const sqlite = config.database.client === 'sqlite';
  const unlock = sqlite ? lockDataDir(config.dataDir) : () => undefined;
  const writeLock = sqlite ? new SharedArrayBuffer(4) : undefined;
  // One fsync thread for the commits of both threads: links[0] here, links[1] for the background.
  // Without it nothing can be acknowledged: like the background thread, its death stops the process.
  const syncer = sqlite
    ? new WalSyncThread(`${sqliteFile(config.dataDir)}-wal`, 2, (e) => {
        logger.fatal({ err: e }, 'the fsync thread failed');
        opts.onFatal?.(`the fsync thread failed: ${e.message}`);
      })
    : null;
  const durability = syncer ? new SharedDurability(syncer.links[0]!) : undefined;
  let store: Store | null = null;
  const closeStore = async () => {
    await store?.close();
    await syncer?.stop();
    await durability?.close();
  };
  let background: BackgroundThread | null = null;
  try {
    store = openStore(servingStoreOptions(config, { writeLock, durability }));
    const applied = await store.migrateLatest();
    if (applied.length) logger.info({ migrations: applied }, 'database migrated');
    const first = await firstStart(store, clock);
    if (first) opts.announceFirstStart?.(first);
    // The MTA, the dispatcher, the jobs and the accept group commit run on a second thread; this
    // one serves the API and DNS.
    background = await startBackgroundThread({ config, writeLock, durability: syncer?.links[1], logToStderr: opts.logToStderr ?? false }, logger, (reason) => opts.onFatal?.(reason), durability ?? null);
    const bg = background;
    const core = buildCore(config, store, logger, clock, { accept: bg.accept });
    core.onMtaWake(() => bg.wake('mta'));
    core.onDispatcherWake(() => bg.wake('dispatcher'));
    const running = await startRoles(config, core, logger, clock, { api: true, dns: true });
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
    await background?.stop().catch(() => undefined);
    await closeStore().catch(() => undefined);
    unlock();
    throw e;
  }
}
