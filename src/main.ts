import type { Config } from './config/config.js';
import type { Logger } from './log/logger.js';
import { systemClock, type Clock } from './lib/time.js';
import { openStore, type Store, type StoreOptions } from './store/store.js';
import { SharedDurability, WalSyncThread } from './store/shared-durability.js';
import { sqliteFile } from './store/sqlite.js';
import { buildCore, type Core } from './core.js';
import { lockDataDir } from './store/data-dir-lock.js';
import { firstStart, type FirstStart } from './modules/account/keys/first-start.js';
import type { ApiRole } from './roles/api.js';
import { startBackgroundThread, type BackgroundThread } from './roles/background.js';
import { startThreadMetrics, transientRetries } from './log/metrics.js';
import { startRoles } from './start-roles.js';
import { ListenHub } from './modules/notifying/webhooks/listen-hub.js';
import { deleteLeftoverListenEndpoints } from './modules/notifying/webhooks/listen.service.js';

// The composition root: config → store → dependencies and services
// (core.ts) → roles (start-roles.ts). The only place, with core.ts and the
// role starters, that reads the whole config; every role gets its slice.

export interface Appliance {
  store: Store;
  api: ApiRole;
  firstStart: FirstStart | null;
  stop(): Promise<void>;
}

/**
 * The store of each thread of a serving process (the API thread and the
 * background thread): one write lock and one fsync thread between them, and
 * a checkpointer each, since a checkpointer hears only of its own store's
 * commits (without one, SQLite checkpoints inside that store's commits), and
 * one storage state (store/storage-state.ts: is the disk full?).
 */
export function servingStoreOptions(
  config: Config,
  shared: Pick<StoreOptions, 'writeLock' | 'durability' | 'storage'>,
): StoreOptions {
  return {
    client: config.database.client,
    dataDir: config.dataDir,
    url: config.database.url,
    backgroundCheckpoints: true,
    onRetry: (reason) => transientRetries.inc({ reason }),
    ...shared,
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
  startThreadMetrics('api');
  const storage = servingStorage(config, logger, opts);
  let stopBackground = async () => undefined as void;
  try {
    const store = storage.open();
    const first = await prepareStore(store, storage.sqlite, clock, logger, opts);
    const listenHub = new ListenHub(logger);
    const bg = await startBackgroundThread(
      {
        config,
        writeLock: storage.writeLock,
        durability: storage.syncer?.links[1],
        storage: store.storage.buffer,
        logToStderr: opts.logToStderr ?? false,
      },
      logger,
      (reason) => opts.onFatal?.(reason),
      storage.durability ?? null,
      (id, frame) => listenHub.deliver(id, frame),
    );
    stopBackground = () => bg.stop();
    const core = buildCore(config, store, logger, clock, { accept: bg.accept, listenHub });
    relayToBackground(core, bg);
    const running = await startRoles(config, core, { api: true, dns: true, inbound: true, submission: true });
    return {
      store,
      api: running.api!,
      firstStart: first,
      async stop() {
        await running.stop();
        await bg.stop();
        await storage.close();
        storage.unlock();
        logger.info('stopped');
      },
    };
  } catch (e) {
    await stopBackground().catch(() => undefined);
    await storage.close().catch(() => undefined);
    storage.unlock();
    throw e;
  }
}

/**
 * What the stores of both threads of `serve` share, held by the API thread:
 * on SQLite the data_dir's lock, the write lock and the fsync thread. close()
 * closes this thread's store first, then the fsync thread.
 */
function servingStorage(config: Config, logger: Logger, opts: StartOptions) {
  const sqlite = config.database.client === 'sqlite';
  const unlock = sqlite ? lockDataDir(config.dataDir) : () => undefined;
  const writeLock = sqlite ? new SharedArrayBuffer(4) : undefined;
  // One fsync thread for the commits of both threads: links[0] here, links[1] for the background.
  // Without it nothing can be acknowledged: like the background thread, its death stops the process.
  const syncer = sqlite
    ? new WalSyncThread(`${sqliteFile(config.dataDir)}-wal`, 2, (e) =>
        fatal(logger, opts, 'the fsync thread failed', e),
      )
    : null;
  const durability = syncer ? new SharedDurability(syncer.links[0]) : undefined;
  let store: Store | null = null;
  return {
    sqlite,
    unlock,
    writeLock,
    syncer,
    durability,
    open: (): Store => (store = openStore(servingStoreOptions(config, { writeLock, durability, storage: { logger } }))),
    async close() {
      await store?.close();
      await syncer?.stop();
      await durability?.close();
    },
  };
}

/** Migrations, the first start's key (announced at once), and no `posthorn listen` endpoint left from before. */
async function prepareStore(
  store: Store,
  sqlite: boolean,
  clock: Clock,
  logger: Logger,
  opts: StartOptions,
): Promise<FirstStart | null> {
  const applied = await store.migrateLatest();
  if (applied.length) logger.info({ migrations: applied }, 'database migrated');
  const first = await firstStart(store, clock);
  if (first) opts.announceFirstStart?.(first);
  // `posthorn listen` streams are the API thread's (the background dispatcher writes there); none survives a restart
  if (sqlite) await deleteLeftoverListenEndpoints(store);
  return first;
}

/** The API thread's core hands new work, request log lines and metrics scrapes to the background thread. */
function relayToBackground(core: Core, bg: BackgroundThread): void {
  for (const role of ['mta', 'dispatcher', 'broadcasts'] as const) core.onWake(role, () => bg.wake(role));
  core.setOtherThreads(() => bg.metrics());
  core.services.logs.sendTo((batch) => bg.requestLogs(batch));
}

function fatal(logger: Logger, opts: StartOptions, what: string, e: Error): void {
  logger.fatal({ err: e }, what);
  opts.onFatal?.(`${what}: ${e.message}`);
}
