import type { Config } from './config/load.js';
import type { Logger } from './log/logger.js';
import { systemClock, type Clock } from './lib/time.js';
import { openStore, type Store } from './store/store.js';
import { KeyAuthenticator } from './modules/keys/keys.service.js';
import { createResolver } from './dns/resolver.js';
import { recheckDomains, type DomainSettings } from './modules/domains/domains.service.js';
import { startJobs } from './roles/jobs.js';
import { firstStart, type FirstStart } from './modules/projects/bootstrap.js';
import type { ApiDeps } from './api/deps.js';
import { startApi, type ApiRole } from './roles/api.js';
import type { Role } from './roles/role.js';

export interface Appliance {
  store: Store;
  api: ApiRole;
  firstStart: FirstStart | null;
  stop(): Promise<void>;
}

const LAST_USED_FLUSH_MS = 5_000;

export function domainSettings(config: Config): DomainSettings {
  return {
    zone: config.dns.zone,
    hostname: config.outbound.hostname,
    testDomain: config.testDomain,
    trackingAvailable: config.http.publicUrl !== null,
    checkTimeoutMs: 5000,
  };
}

/**
 * The composition root: config → store → dependencies → roles. The only
 * place that sees the whole config; every role gets its slice.
 */
export interface StartOptions {
  clock?: Clock;
  /**
   * Called at once when the first start created the default project's key,
   * before anything listens: the key must reach the operator even if a role
   * then fails to start, since it is never shown again.
   */
  announceFirstStart?(first: FirstStart): void;
}

export async function startAppliance(config: Config, logger: Logger, opts: StartOptions = {}): Promise<Appliance> {
  const clock = opts.clock ?? systemClock;
  const store = openStore({ client: config.database.client, dataDir: config.dataDir, url: config.database.url });
  const roles: Role[] = [];
  try {
    const applied = await store.migrateLatest();
    if (applied.length) logger.info({ migrations: applied }, 'database migrated');
    const first = await firstStart(store, clock);
    if (first) opts.announceFirstStart?.(first);
    const auth = new KeyAuthenticator({ store, clock });
    const resolver = createResolver({ servers: config.dns.resolvers });
    const deps: ApiDeps = { config, store, clock, logger, auth, resolver, domains: domainSettings(config) };
    roles.push(
      startJobs(
        [
          {
            name: 'domain_recheck',
            schedule: config.jobs.domainRecheck,
            run: async () => `${await recheckDomains(deps, (d, e) => logger.warn({ err: e, domain: d.name }, 'domain re-check failed'))} domain(s) changed status`,
          },
        ],
        logger,
      ),
    );
    const api = await startApi(deps, config.http);
    roles.push(api);
    const flushTimer = setInterval(() => {
      auth.flushLastUsed().catch((e: unknown) => logger.warn({ err: e }, 'could not record key last-used times'));
    }, LAST_USED_FLUSH_MS);
    flushTimer.unref();
    return {
      store,
      api,
      firstStart: first,
      async stop() {
        clearInterval(flushTimer);
        for (const role of [...roles].reverse()) {
          await role.stop().catch((e: unknown) => logger.error({ err: e, role: role.name }, 'role did not stop cleanly'));
        }
        await auth.flushLastUsed().catch(() => undefined);
        await store.close();
        logger.info('stopped');
      },
    };
  } catch (e) {
    for (const role of roles.reverse()) await role.stop().catch(() => undefined);
    await store.close().catch(() => undefined);
    throw e;
  }
}
