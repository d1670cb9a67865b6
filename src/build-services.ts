import { inboundService } from './modules/receiving/inbound/inbound.service.js';
import { deliveryState } from './modules/deliverability/shaping/mta-status.service.js';
import { buildVerifyService } from './modules/deliverability/verify/verify.service.js';
import type { Config } from './config/config.js';
import type { WorkPool } from './lib/work-pool.js';
import type { WorkTasks } from './work-tasks.js';
import type { Services } from './api/services.js';
import type { WakeRole } from './roles/role.js';
import type { GroupCommit } from './store/group-commit.js';
import type { CoreDeps } from './core-deps.js';
import { egressOptions, attachmentFetcher } from './egress-options.js';
import { domainService } from './modules/deliverability/domains/domains.service.js';
import type { Acceptor } from './modules/sending/emails/accept-batch.js';
import { emailService } from './modules/sending/emails/emails.service.js';
import { healthService } from './modules/operations/health/health.service.js';
import { keyService } from './modules/account/keys/keys.service.js';
import { sessionService } from './modules/account/sessions/sessions.service.js';
import { requestLogService } from './modules/account/logs/logs.service.js';
import { retentionService } from './modules/operations/retention/retention.service.js';
import { usageService } from './modules/account/usage/usage.service.js';
import { unsubscribeService } from './modules/receiving/unsubscribe/unsubscribe.service.js';
import { contactService } from './modules/audience/contacts/contacts.service.js';
import { audienceService } from './modules/audience/audiences/audiences.service.js';
import { contactImportService } from './modules/audience/contact-import/contact-import.service.js';
import { segmentService } from './modules/audience/segments/segments.service.js';
import { topicService } from './modules/audience/topics/topics.service.js';
import { preferenceService } from './modules/audience/preferences/preferences.service.js';
import { formService } from './modules/audience/forms/forms.service.js';
import { broadcastService } from './modules/audience/broadcasts/broadcasts.service.js';
import { preferencesUrl, signPreferenceToken } from './modules/audience/preferences/preference-token.js';
import { blocklistService } from './modules/deliverability/blocklists/blocklists.service.js';
import { suppressionService } from './modules/sending/suppressions/suppressions.service.js';
import { templateService } from './modules/sending/templates/templates.service.js';
import { trackingService } from './modules/sending/tracking/tracking.service.js';
import { webhookService } from './modules/notifying/webhooks/webhooks.service.js';
import type { ListenHub } from './modules/notifying/webhooks/listen-hub.js';
import { checkUrl } from './net/egress.js';

// The module services of one thread (all but metrics, which core.ts adds:
// it needs the other threads), each given its slice of the config.

// long: one entry per service, each with its slice of the config
export function buildServices(
  config: Config,
  deps: CoreDeps,
  accept: Acceptor,
  wake: (role: WakeRole) => void,
  writer: GroupCommit,
  parsing: WorkPool<WorkTasks>,
  listen: ListenHub,
): Omit<Services, 'metrics'> {
  const { store, clock, logger, resolver } = deps;
  const egress = egressOptions(config, resolver, 30_000);
  const templates = templateService({
    store,
    clock,
    compile: (content) => parsing.run('compileTemplate', content),
    renderOffThread: (job) => parsing.run('render', job),
  });
  return {
    auth: deps.auth,
    authThrottle: deps.authThrottle,
    emails: emailService({
      store,
      clock,
      accept,
      templates,
      fetchAttachment: attachmentFetcher(egress),
      idempotencyTtlMs: config.limits.idempotencyTtlMs,
    }),
    templates,
    domains: domainService({ store, clock, resolver, domains: deps.domains }),
    webhooks: webhookService({
      store,
      clock,
      checkEndpointUrl: async (url) =>
        void (await checkUrl(url, { allowPrivate: config.network.allowPrivate, resolve: egress.resolve })),
      firstAttemptDelayMs: config.webhooks.attemptDelaysMs[0] ?? 0,
      onQueued: () => wake('dispatcher'),
      listen,
    }),
    keys: keyService({ store, clock }, deps.auth),
    sessions: sessionService({ store, clock, auth: deps.auth, throttle: deps.authThrottle }),
    health: healthService(store, logger),
    tracking: trackingService(deps.tracking, logger),
    unsubscribe: unsubscribeService({ store, clock, key: () => deps.tracking.key() }),
    inbound: inboundService({
      store,
      writer,
      clock,
      logger,
      hostname: config.outbound.hostname,
      unsubscribeKey: () => deps.tracking.key(),
      read: (input) => parsing.run('inbound', input),
      readAttachment: (input) => parsing.run('attachment', input),
    }),
    verify: buildVerifyService({ resolvers: config.dns.resolvers, ...config.verify }, store, clock),
    suppressions: suppressionService({ store, clock }),
    usage: usageService({ store, clock }),
    contacts: contactService({ store, clock }),
    delivery: {
      state: (project) =>
        deliveryState(store, project, clock.now(), {
          ips: config.outbound.ips,
          warmupSchedule: config.outbound.warmupSchedule,
          bulkPool: config.outbound.bulkPool,
        }),
    },
    audiences: audienceService({ store, clock }),
    segments: segmentService({ store, clock }),
    contactImport: contactImportService({ store, clock }),
    topics: topicService({ store, clock }),
    preferences: preferenceService({ store, clock, key: () => deps.tracking.key() }),
    forms: formService({
      store,
      clock,
      logger,
      key: () => deps.tracking.key(),
      publicUrl: config.http.publicUrl,
      allowPrivate: config.network.allowPrivate,
      accept,
      templates,
      limits: {
        perIpPerHour: config.forms.submissionsPerIpPerHour,
        perFormPerMinute: config.forms.submissionsPerFormPerMinute,
      },
    }),
    broadcasts: broadcastService({
      store,
      clock,
      checkTemplate: (projectId, templateId, version, variables) =>
        templates.renderForSend(projectId, {
          templateId,
          version,
          variables,
          language: null,
          firstRecipient: 'someone@example.com',
        }),
      renderTemplate: (projectId, templateId, version, variables, to) =>
        templates.renderForSend(projectId, { templateId, version, variables, language: null, firstRecipient: to }),
      preferencesUrl: async (contactId) =>
        config.http.publicUrl
          ? preferencesUrl(config.http.publicUrl, signPreferenceToken(await deps.tracking.key(), contactId))
          : '',
      onSent: () => wake('broadcasts'),
      checkInline: (content) => parsing.run('checkBroadcast', content),
    }),
    blocklists: blocklistService({ store, clock, resolver, blocklists: deps.blocklists }),
    logs: requestLogService({ store, writer, clock, logger }),
    retention: retentionService({ store, clock }, { days: config.retention.days }),
  };
}
