import type { AuthThrottle } from '../lib/auth-throttle.js';
import type { DeliveryState } from '../modules/deliverability/shaping/mta-status.service.js';
import type { DomainService } from '../modules/deliverability/domains/domains.service.js';
import type { EmailService } from '../modules/sending/emails/emails.service.js';
import type { InboundService } from '../modules/receiving/inbound/inbound.service.js';
import type { HealthService } from '../modules/operations/health/health.service.js';
import type { KeyAuthenticator, KeyService } from '../modules/account/keys/keys.service.js';
import type { MetricsService } from '../modules/operations/health/metrics.service.js';
import type { RequestLogService } from '../modules/account/logs/logs.service.js';
import type { RetentionService } from '../modules/operations/retention/retention.service.js';
import type { UsageService } from '../modules/account/usage/usage.service.js';
import type { BlocklistService } from '../modules/deliverability/blocklists/blocklists.service.js';
import type { ContactService } from '../modules/audience/contacts/contacts.service.js';
import type { AudienceService } from '../modules/audience/audiences/audiences.service.js';
import type { ContactImportService } from '../modules/audience/contact-import/contact-import.service.js';
import type { SegmentService } from '../modules/audience/segments/segments.service.js';
import type { TopicService } from '../modules/audience/topics/topics.service.js';
import type { PreferenceService } from '../modules/audience/preferences/preferences.service.js';
import type { FormService } from '../modules/audience/forms/forms.service.js';
import type { BroadcastService } from '../modules/audience/broadcasts/broadcasts.service.js';
import type { UnsubscribeService } from '../modules/receiving/unsubscribe/unsubscribe.service.js';
import type { SessionService } from '../modules/account/sessions/sessions.service.js';
import type { SuppressionService } from '../modules/sending/suppressions/suppressions.service.js';
import type { TemplateService } from '../modules/sending/templates/templates.service.js';
import type { TrackingService } from '../modules/sending/tracking/tracking.service.js';
import type { VerifyService } from '../modules/deliverability/verify/verify.service.js';
import type { WebhookService } from '../modules/notifying/webhooks/webhooks.service.js';

/** What the edge and the route handlers use: module services, never the store. Built once by build-services.ts (or a test). */
export interface Services {
  auth: KeyAuthenticator;
  /** failed authentications per client address (limits.auth_failures_per_ip): the /v1 bearer's, the dashboard sign-in's and SMTP AUTH's */
  authThrottle: AuthThrottle;
  emails: EmailService;
  domains: DomainService;
  webhooks: WebhookService;
  templates: TemplateService;
  keys: KeyService;
  /** the dashboard's sign-in sessions */
  sessions: SessionService;
  health: HealthService;
  tracking: TrackingService;
  unsubscribe: UnsubscribeService;
  inbound: InboundService;
  verify: VerifyService;
  suppressions: SuppressionService;
  usage: UsageService;
  blocklists: BlocklistService;
  contacts: ContactService;
  audiences: AudienceService;
  segments: SegmentService;
  /** the CSV import and export of contacts (the dashboard's; the CLI runs the same code) */
  contactImport: ContactImportService;
  topics: TopicService;
  /** the hosted preference page's (/p/{token}) */
  preferences: PreferenceService;
  forms: FormService;
  broadcasts: BroadcastService;
  logs: RequestLogService;
  retention: RetentionService;
  metrics: MetricsService;
  /** what holds a project's mail back in the MTA (suspended providers, warm-up caps, DNS), for the dashboard */
  delivery: { state(project: { id: string; ipPool: string | null }): Promise<DeliveryState> };
}
