import { buildConfig } from '../../src/config/load.js';
import { type Config } from '../../src/config/config.js';
import { silentLogger } from '../../src/log/logger.js';
import { systemClock, type Clock } from '../../src/lib/time.js';
import { createKey } from '../../src/modules/account/keys/keys.service.js';
import { createProject, setProject } from '../../src/modules/account/projects/projects.service.js';
import type { Project } from '../../src/modules/account/projects/projects.repo.js';
import type { KeyMode } from '../../src/modules/account/keys/scopes.js';
import type { ApiRole } from '../../src/roles/api.js';
import { buildCore, type Core, type CoreDeps } from '../../src/core.js';
import { startRoles, type RoleSelection, type RunningRoles } from '../../src/start-roles.js';
import type { Store } from '../../src/store/store.js';
import { client, type Client } from './http.js';

let counter = 0;

export interface TestApi {
  baseUrl: string;
  config: Config;
  /** what the services of the app were built from: the store, the clock, the tracking and domain settings */
  deps: CoreDeps;
  core: Core;
  role: ApiRole;
  running: RunningRoles;
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

/**
 * The real Koa app on an ephemeral loopback port over the given (migrated)
 * store, with the roles a test asks for (the queue worker, the webhook
 * dispatcher) running in this process.
 */
export async function startTestApi(
  store: Store,
  overrides: Record<string, unknown> = {},
  opts: { clock?: Clock; roles?: RoleSelection } = {},
): Promise<TestApi> {
  const clock = opts.clock ?? systemClock;
  const config: Config = buildConfig(
    { data_dir: '/nonexistent', limits: { requests_per_second: 10_000 }, log: { level: 'silent' }, ...overrides },
    null,
  );
  const core = buildCore(config, store, silentLogger(), clock);
  const running = await startRoles(config, core, { api: true, ...opts.roles }, { host: '127.0.0.1', port: 0 });
  const role = running.api!;
  const deps = core.deps;
  const baseUrl = `http://127.0.0.1:${role.port}`;
  const tenant = async (t: { mode?: KeyMode; scopes?: string[]; approved?: boolean } = {}): Promise<Tenant> => {
    const project = await createProject(deps, { name: `t${++counter}-${Date.now()}`, approved: t.approved ?? true });
    const newKey = async (k: { mode?: KeyMode; scopes?: string[] } = {}) => {
      const { key, secret } = await createKey(deps, {
        projectId: project.id,
        mode: k.mode ?? t.mode ?? 'test',
        scopes: k.scopes,
      });
      return { id: key.id, key: secret, api: client(baseUrl, secret) };
    };
    const first = await newKey({ scopes: t.scopes });
    return {
      project,
      keyId: first.id,
      key: first.key,
      api: first.api,
      newKey,
      suspend: async () => {
        await setProject(deps, project.id, { suspended: true });
        // as an operator's change from another process would, once the key cache runs out
        deps.auth.invalidate();
      },
    };
  };
  return {
    baseUrl,
    config,
    deps,
    core,
    role,
    running,
    stop: () => running.stop(),
    tenant,
    anonymous: client(baseUrl, null),
  };
}
