import type { Config } from './config/config.js';
import type { Core } from './core.js';
import type { ApiListen } from './roles/api.js';
import type { Role } from './roles/role.js';
import type { RoleSelection, RunningRoles, Starting } from './role-selection.js';
import { startApiRoles, startDnsRole, startInboundRole, startSubmissionRole } from './listener-roles.js';
import { clusterService, newNodeId } from './modules/operations/cluster/cluster.service.js';
import { startNode } from './roles/node.js';
import { PACKAGE_VERSION } from './config/package-root.js';
import { startJobsRole, startMtaRoles, startWebhooksRole } from './queue-roles.js';

// The order the roles of a thread start in, and stop in (the reverse).

export type { RoleSelection, RunningRoles } from './role-selection.js';

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

function startNodeRole(config: Config, core: Core, id: string, running: RunningRoles): Promise<Role> {
  const { store, clock, logger } = core.deps;
  const deadAfterMs = config.cluster.deadAfterMs;
  return startNode({
    id,
    cluster: clusterService({ store, clock, deadAfterMs, version: PACKAGE_VERSION }),
    deadAfterMs,
    logger,
    now: () => clock.now(),
    released: () => running.mta?.worker.recoverSoon(),
    alive: (nodes) => running.webhooks?.dispatcher.sharedBy(nodes),
    shared: store.client === 'pg',
  });
}

/** Start the selected roles over a built core; stop() stops them in reverse order. */
export async function startRoles(
  config: Config,
  core: Core,
  select: RoleSelection,
  listen: ApiListen = config.http,
): Promise<RunningRoles> {
  const started: Role[] = [];
  const stopAll = async () => {
    for (const role of [...started].reverse()) {
      await role
        .stop()
        .catch((e: unknown) => core.deps.logger.error({ err: e, role: role.name }, 'role did not stop cleanly'));
    }
  };
  const running: RunningRoles = {
    api: null,
    dnsPort: null,
    mta: null,
    webhooks: null,
    inboundPort: null,
    submissionPort: null,
    metricsPort: null,
    stop: stopAll,
  };
  // stopped last: every role may still hand it work while it stops
  started.push({ name: 'parsing', stop: () => core.parsing.close() });
  const nodeId = newNodeId();
  try {
    // registered before the MTA and the dispatcher take a lease, stopped after them
    if (select.mta || select.webhooks) started.push(await startNodeRole(config, core, nodeId, running));
    for (const [name, start] of ROLES)
      if (select[name]) await start({ config, core, listen, running, started, nodeId });
    return running;
  } catch (e) {
    await stopAll();
    throw e;
  }
}
