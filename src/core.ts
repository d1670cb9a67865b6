import { InboundService } from './modules/inbound/inbound.service.js';
import { buildVerifyService } from './modules/verify/verify.service.js';
import { readFileSync } from 'node:fs';
import type { Config } from './config/load.js';
import type { Logger } from './log/logger.js';
import { validationError } from './lib/errors.js';
import { AuthThrottle } from './lib/auth-throttle.js';
import { WorkPool } from './lib/work-pool.js';
import { startThread } from './lib/thread.js';
import { parseJobs } from './log/metrics.js';
import type { WorkTasks } from './work-tasks.js';
import { PACKAGE_VERSION } from './config/package-root.js';
import { systemClock, type Clock } from './lib/time.js';
import type { Services } from './api/services.js';
import type { WakeRole } from './roles/role.js';
import { createResolver, type DnsResolver } from './dns/resolver.js';
import type { Store } from './store/store.js';
import { GroupCommit } from './store/group-commit.js';
import { domainSettings } from './modules/domains/domain-settings.js';
import { domainService, type DomainSettings } from './modules/domains/domains.service.js';
import { AcceptQueue, type AcceptHandoff, type Acceptor } from './modules/emails/accept-batch.js';
import { EmailService, type AttachmentFetcher } from './modules/emails/emails.service.js';
import { healthService } from './modules/health/health.service.js';
import { metricsService, type ThreadValues } from './modules/health/metrics.service.js';
import { KeyAuthenticator, keyService } from './modules/keys/keys.service.js';
import { sessionService } from './modules/sessions/sessions.service.js';
import { RequestLogService } from './modules/logs/logs.service.js';
import { RetentionService } from './modules/retention/retention.service.js';
import { usageService } from './modules/usage/usage.service.js';
import { unsubscribeService } from './modules/unsubscribe/unsubscribe.service.js';
import { contactService } from './modules/contacts/contacts.service.js';
import { audienceService } from './modules/audiences/audiences.service.js';
import { segmentService } from './modules/segments/segments.service.js';
import { topicService } from './modules/topics/topics.service.js';
import { preferenceService } from './modules/preferences/preferences.service.js';
import { formService } from './modules/forms/forms.service.js';
import { broadcastService } from './modules/broadcasts/broadcasts.service.js';
import { BroadcastFanOut } from './modules/broadcasts/fan-out.js';
import { blocklistService, blocklistSettings, type BlocklistSettings } from './modules/blocklists/blocklists.service.js';
import { suppressionService } from './modules/suppressions/suppressions.service.js';
import { TemplateService } from './modules/templates/templates.service.js';
import { trackingKey, trackingService, type TrackingDeps } from './modules/tracking/tracking.service.js';
import { webhookService } from './modules/webhooks/webhooks.service.js';
import { ListenHub } from './modules/webhooks/listen-hub.js';
import type { ListenSink } from './modules/webhooks/listen-stream.js';
import { checkUrl, EgressError, failureWord, guardedRequest, resolverLookup, type EgressOptions, type EgressResponse } from './net/egress.js';

// The dependencies and the services of one thread (the API thread of `serve`,
// its background thread, or a test), built from the config by main.ts.

export const USER_AGENT = `Posthorn/${PACKAGE_VERSION} (+webhooks)`;

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
  blocklists: BlocklistSettings;
  auth: KeyAuthenticator;
  /** failed authentications per client address, shared by the API, the dashboard and SMTP AUTH (limits.auth_failures_per_ip) */
  authThrottle: AuthThrottle;
}

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
export function buildCore(config: Config, store: Store, logger: Logger, clock: Clock = systemClock, opts: { accept?: Acceptor; listenHub?: ListenHub; listenSink?: ListenSink } = {}): Core {
  const writer = new GroupCommit(store);
  const resolver = createResolver({ servers: config.dns.resolvers });
  const wake: Record<WakeRole, () => void> = { mta: () => undefined, dispatcher: () => undefined, broadcasts: () => undefined };
  let otherThreads = async (): Promise<ThreadValues[]> => [];
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
  const parsing = parsingPool(config);
  const listenHub = opts.listenHub ?? new ListenHub(logger);
  const deps: CoreDeps = {
    store,
    clock,
    logger,
    resolver,
    tracking: { store, clock, publicUrl: config.http.publicUrl, key: trackingKey(store) },
    domains: domainSettings(config),
    blocklists: blocklistSettings(config),
    auth: new KeyAuthenticator({ store, clock }),
    authThrottle: new AuthThrottle({ failuresPerIp: config.limits.authFailuresPerIp, windowMs: config.limits.authFailureWindowMs }, clock),
  };
  return {
    deps,
    parsing,
    services: { ...buildServices(config, deps, opts.accept ?? acceptQueue!, (role) => wake[role](), writer, parsing, listenHub), metrics: metricsService(store, logger, () => otherThreads()) },
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

// long: one entry per service, each with its slice of the config
function buildServices(config: Config, deps: CoreDeps, accept: Acceptor, wake: (role: WakeRole) => void, writer: GroupCommit, parsing: WorkPool<WorkTasks>, listen: ListenHub): Omit<Services, 'metrics'> {
  const { store, clock, logger, resolver } = deps;
  const egress = egressOptions(config, resolver, 30_000);
  const templates = new TemplateService({ store, clock, compile: (content) => parsing.run('compileTemplate', content), renderOffThread: (job) => parsing.run('render', job) });
  return {
    auth: deps.auth,
    authThrottle: deps.authThrottle,
    emails: new EmailService({ store, clock, accept, templates, fetchAttachment: attachmentFetcher(egress), idempotencyTtlMs: config.limits.idempotencyTtlMs }),
    templates,
    domains: domainService({ store, clock, resolver, domains: deps.domains }),
    webhooks: webhookService({
      store,
      clock,
      checkEndpointUrl: async (url) => void (await checkUrl(url, { allowPrivate: config.network.allowPrivate, resolve: egress.resolve })),
      firstAttemptDelayMs: config.webhooks.retryScheduleMs[0] ?? 0,
      onQueued: () => wake('dispatcher'),
      listen,
    }),
    keys: keyService({ store, clock }, deps.auth),
    sessions: sessionService({ store, clock, auth: deps.auth, throttle: deps.authThrottle }),
    health: healthService(store, logger),
    tracking: trackingService(deps.tracking, logger),
    unsubscribe: unsubscribeService({ store, clock, key: deps.tracking.key }),
    inbound: new InboundService({ store, writer, clock, logger, hostname: config.outbound.hostname, unsubscribeKey: deps.tracking.key, read: (input) => parsing.run('inbound', input), readAttachment: (input) => parsing.run('attachment', input) }),
    verify: buildVerifyService({ resolvers: config.dns.resolvers, ...config.verify }, store, clock),
    suppressions: suppressionService({ store, clock }),
    usage: usageService({ store, clock }),
    contacts: contactService({ store, clock }),
    audiences: audienceService({ store, clock }),
    segments: segmentService({ store, clock }),
    topics: topicService({ store, clock }),
    preferences: preferenceService({ store, clock, key: deps.tracking.key }),
    forms: formService({ store, clock, logger, key: deps.tracking.key, publicUrl: config.http.publicUrl, allowPrivate: config.network.allowPrivate, accept, templates, limits: { perIpPerHour: config.forms.submissionsPerIpPerHour, perFormPerMinute: config.forms.submissionsPerFormPerMinute } }),
    broadcasts: broadcastService({
      store,
      clock,
      checkTemplate: (projectId, templateId, version, variables) => templates.renderForSend(projectId, { templateId, version, variables, language: null, firstRecipient: 'someone@example.com' }),
      onSent: () => wake('broadcasts'),
      checkInline: (content) => parsing.run('checkBroadcast', content),
    }),
    blocklists: blocklistService({ store, clock, resolver, blocklists: deps.blocklists }),
    logs: new RequestLogService({ store, writer, clock, logger }),
    retention: new RetentionService({ store, clock }, { days: config.retention.days }),
  };
}

/** The broadcast fan-out of the thread that holds the accept group commit (the background thread of `serve`). */
export function buildFanOut(config: Config, core: Core, acceptQueue: AcceptQueue): BroadcastFanOut {
  const { store, clock, logger, tracking } = core.deps;
  return new BroadcastFanOut({
    store,
    clock,
    logger,
    accept: acceptQueue,
    renderTemplate: (projectId, templateId, version, variables, to) => core.services.templates.renderForSend(projectId, { templateId, version, variables, language: null, firstRecipient: to }),
    key: tracking.key,
    publicUrl: config.http.publicUrl,
    maxPerSecond: config.broadcasts.maxPerSecond,
  });
}

/**
 * Attachments by `path` come through the SSRF guard. A failure names the
 * field and says why in one stable word (failureWord, or `status N`): the
 * answer goes to whoever sent the URL, who must learn nothing of the network
 * behind the appliance (addresses, a peer's certificate or error text).
 */
export function attachmentFetcher(egress: EgressOptions): AttachmentFetcher {
  return async (url, field, maxBytes) => {
    let res: EgressResponse;
    try {
      res = await guardedRequest(url, { method: 'GET', maxBodyBytes: maxBytes }, egress);
    } catch (e) {
      const word = failureWord(e);
      if (word) throw validationError(field, `could not be downloaded: ${word}`);
      // a URL refused for its form: the message is about the URL alone
      if (e instanceof EgressError) throw validationError(field, e.message);
      throw e;
    }
    if (res.status < 200 || res.status > 299) throw validationError(field, `could not be downloaded: status ${res.status}`);
    return { content: res.body, contentType: res.headers['content-type']?.split(';')[0]?.trim() || null };
  };
}

