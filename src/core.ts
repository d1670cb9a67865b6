import type { Config } from './config/config.js';
import type { Logger } from './log/logger.js';
import { WorkPool } from './lib/work-pool.js';
import { startThread } from './lib/thread.js';
import { parseJobs } from './log/metrics.js';
import type { WorkTasks } from './work-tasks.js';
import { systemClock, type Clock } from './lib/time.js';
import type { Services } from './api/services.js';
import type { WakeRole } from './roles/role.js';
import { createResolver } from './dns/resolver.js';
import type { Store } from './store/store.js';
import { GroupCommit } from './store/group-commit.js';
import { buildDeps, type CoreDeps } from './core-deps.js';
import { buildServices } from './build-services.js';
import {
  AcceptQueue,
  type AcceptHandoff,
  type AcceptOptions,
  type Acceptor,
} from './modules/sending/emails/accept-batch.js';
import { metricsService, type ThreadValues } from './modules/operations/health/metrics.service.js';
import { BroadcastFanOut } from './modules/audience/broadcasts/fan-out.js';
import { ListenHub } from './modules/notifying/webhooks/listen-hub.js';
import type { ListenSink } from './modules/notifying/webhooks/listen-stream.js';

// The dependencies and the services of one thread (the API thread of `serve`,
// its background thread, or a test), built from the config by main.ts.

export type { CoreDeps } from './core-deps.js';

export interface Core {
  deps: CoreDeps;
  /** the threads that parse untrusted input for this thread's services (started on first use; closed by startRoles' stop) */
  parsing: WorkPool<WorkTasks>;
  services: Services;
  /** the accept group commit built here; null when another thread's was passed in */
  acceptQueue: AcceptQueue | null;
  writer: GroupCommit;
  /** new work for a role: the MTA (an email stored), the dispatcher (an event), the fan-out (a broadcast sent) */
  wake(role: WakeRole): void;
  /** set by the roles that want to hear about new work */
  onWake(role: WakeRole, fn: () => void): void;
  /** the MTA started in this thread: the accept claims live mail due now for it */
  setHandoff(h: AcceptHandoff): void;
  /** where /metrics gets the other threads' values (serve: the background thread's) */
  setOtherThreads(fn: () => Promise<ThreadValues[]>): void;
  /** the `posthorn listen` streams of this thread's API */
  listenHub: ListenHub;
  /** where this thread's dispatcher hands listen deliveries: its own hub, or (the background thread of serve) the API thread's */
  listenSink: ListenSink;
}

/** The dependencies and services of one thread, shared by `serve` and the tests. */
export function buildCore(
  config: Config,
  store: Store,
  logger: Logger,
  clock: Clock = systemClock,
  opts: { accept?: Acceptor; listenHub?: ListenHub; listenSink?: ListenSink } = {},
): Core {
  const writer = new GroupCommit(store);
  const resolver = createResolver({ servers: config.dns.resolvers });
  const wake: Record<WakeRole, () => void> = {
    mta: () => undefined,
    dispatcher: () => undefined,
    broadcasts: () => undefined,
  };
  let otherThreads = async (): Promise<ThreadValues[]> => [];
  let handoff: AcceptHandoff | null = null;
  // `serve` passes the relay to the background thread's queue; tests and the background thread itself use their own
  const acceptQueue = opts.accept
    ? null
    : new AcceptQueue(
        store,
        clock,
        logger,
        acceptOptions(config, writer, { onStored: () => wake.mta(), handoff: () => handoff }),
      );
  const parsing = parsingPool(config);
  const listenHub = opts.listenHub ?? new ListenHub(logger);
  const deps = buildDeps(config, store, clock, logger, resolver);
  const services = buildServices(
    config,
    deps,
    opts.accept ?? acceptQueue!,
    (role) => wake[role](),
    writer,
    parsing,
    listenHub,
  );
  return {
    deps,
    parsing,
    services: { ...services, metrics: metricsService(store, logger, () => otherThreads()) },
    acceptQueue,
    writer,
    wake: (role) => wake[role](),
    onWake: (role, fn) => void (wake[role] = fn),
    setHandoff: (h) => void (handoff = h),
    setOtherThreads: (fn) => void (otherThreads = fn),
    listenHub,
    listenSink: opts.listenSink ?? listenHub.sink,
  };
}

/** The accept group commit's slice of the config: with outbound.mode direct, live mail is routed by its recipient's domain. */
function acceptOptions(
  config: Config,
  writer: GroupCommit,
  on: Pick<AcceptOptions, 'onStored' | 'handoff'>,
): AcceptOptions {
  return {
    hostname: config.outbound.hostname,
    routeOf: (environment, address) =>
      environment === 'live' && config.outbound.mode === 'direct' ? address.slice(address.lastIndexOf('@') + 1) : '',
    testDomain: config.testDomain,
    idempotencyTtlMs: config.limits.idempotencyTtlMs,
    ...on,
    writer,
  };
}

/**
 * The parsing pool (docs/security.md): parsing.threads workers, each job
 * held to parsing.time_budget and each thread's heap to parsing.memory_mb.
 */
function parsingPool(config: Config): WorkPool<WorkTasks> {
  return new WorkPool<WorkTasks>({
    threads: config.parsing.threads,
    timeBudgetMs: config.parsing.timeBudgetMs,
    memoryMb: config.parsing.memoryMb,
    start: (resourceLimits) => startThread(import.meta.url, 'work-thread', { resourceLimits }),
    onDone: (task, outcome) => parseJobs.inc({ task, outcome }),
  });
}

/** The broadcast fan-out of the thread that holds the accept group commit (the background thread of `serve`). */
export function buildFanOut(config: Config, core: Core, acceptQueue: AcceptQueue): BroadcastFanOut {
  const { store, clock, logger, tracking } = core.deps;
  return new BroadcastFanOut({
    store,
    clock,
    logger,
    accept: acceptQueue,
    renderTemplate: (projectId, templateId, version, variables, to) =>
      core.services.templates.renderForSend(projectId, {
        templateId,
        version,
        variables,
        language: null,
        firstRecipient: to,
      }),
    key: () => tracking.key(),
    publicUrl: config.http.publicUrl,
    maxPerSecond: config.broadcasts.maxPerSecond,
  });
}
