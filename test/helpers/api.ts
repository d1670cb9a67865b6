import { buildConfig, type Config } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import { systemClock, type Clock } from '../../src/lib/time.js';
import { KeyAuthenticator } from '../../src/modules/keys/keys.service.js';
import { createKey } from '../../src/modules/keys/keys.service.js';
import { createProject, setProject } from '../../src/modules/projects/projects.service.js';
import type { Project } from '../../src/modules/projects/projects.repo.js';
import type { KeyMode } from '../../src/modules/keys/scopes.js';
import type { ApiDeps } from '../../src/api/deps.js';
import { startApi, type ApiRole } from '../../src/roles/api.js';
import { createResolver } from '../../src/dns/resolver.js';
import { domainSettings } from '../../src/main.js';
import type { Store } from '../../src/store/store.js';
import { client, type Client } from './http.js';

let counter = 0;

export interface TestApi {
  baseUrl: string;
  deps: ApiDeps;
  role: ApiRole;
  stop(): Promise<void>;
  /** a new project with a key; returns an HTTP client holding that key */
  tenant(opts?: { mode?: KeyMode; scopes?: string[]; approved?: boolean }): Promise<Tenant>;
  anonymous: Client;
}

export interface Tenant {
  project: Project;
  keyId: string;
  key: string;
  api: Client;
  /** another key of the same project */
  newKey(opts?: { mode?: KeyMode; scopes?: string[] }): Promise<{ id: string; key: string; api: Client }>;
  suspend(): Promise<void>;
}

/** The real Koa app on an ephemeral loopback port over the given (migrated) store. */
export async function startTestApi(store: Store, overrides: Record<string, unknown> = {}, clock: Clock = systemClock): Promise<TestApi> {
  const config: Config = buildConfig({ data_dir: '/nonexistent', limits: { requests_per_second: 10_000 }, log: { level: 'silent' }, ...overrides }, null);
  const deps: ApiDeps = {
    config,
    store,
    clock,
    logger: silentLogger(),
    auth: new KeyAuthenticator({ store, clock }),
    resolver: createResolver({ servers: config.dns.resolvers, timeoutMs: 1000, tries: 1 }),
    domains: domainSettings(config),
  };
  const role = await startApi(deps, { host: '127.0.0.1', port: 0 });
  const baseUrl = `http://127.0.0.1:${role.port}`;
  const tenant = async (opts: { mode?: KeyMode; scopes?: string[]; approved?: boolean } = {}): Promise<Tenant> => {
    const project = await createProject(deps, { name: `t${++counter}-${Date.now()}`, approved: opts.approved ?? true });
    const newKey = async (k: { mode?: KeyMode; scopes?: string[] } = {}) => {
      const { key, secret } = await createKey(deps, { projectId: project.id, mode: k.mode ?? opts.mode ?? 'test', scopes: k.scopes });
      return { id: key.id, key: secret, api: client(baseUrl, secret) };
    };
    const first = await newKey({ scopes: opts.scopes });
    return {
      project,
      keyId: first.id,
      key: first.key,
      api: first.api,
      newKey,
      suspend: async () => {
        await setProject(deps, project.id, { suspended: true });
      },
    };
  };
  return { baseUrl, deps, role, stop: () => role.stop(), tenant, anonymous: client(baseUrl, null) };
}
