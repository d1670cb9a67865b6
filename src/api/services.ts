import type { AuthThrottle } from '../lib/auth-throttle.js';
import type { DomainService } from '../modules/domains/domains.service.js';
import type { EmailService } from '../modules/emails/emails.service.js';
import type { InboundService } from '../modules/inbound/inbound.service.js';
import type { HealthService } from '../modules/health/health.service.js';
import type { KeyAuthenticator, KeyService } from '../modules/keys/keys.service.js';
import type { MetricsService } from '../modules/health/metrics.service.js';
import type { RequestLogService } from '../modules/logs/logs.service.js';
import type { RetentionService } from '../modules/retention/retention.service.js';
import type { UsageService } from '../modules/usage/usage.service.js';
import type { BlocklistService } from '../modules/blocklists/blocklists.service.js';
import type { ContactService } from '../modules/contacts/contacts.service.js';
import type { AudienceService } from '../modules/audiences/audiences.service.js';
import type { SegmentService } from '../modules/segments/segments.service.js';
import type { TopicService } from '../modules/topics/topics.service.js';
import type { PreferenceService } from '../modules/preferences/preferences.service.js';
import type { FormService } from '../modules/forms/forms.service.js';
import type { BroadcastService } from '../modules/broadcasts/broadcasts.service.js';
import type { UnsubscribeService } from '../modules/unsubscribe/unsubscribe.service.js';
import type { SessionService } from '../modules/sessions/sessions.service.js';
import type { SuppressionService } from '../modules/suppressions/suppressions.service.js';
import type { TemplateService } from '../modules/templates/templates.service.js';
import type { TrackingService } from '../modules/tracking/tracking.service.js';
import type { VerifyService } from '../modules/verify/verify.service.js';
import type { WebhookService } from '../modules/webhooks/webhooks.service.js';

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
  topics: TopicService;
  /** the hosted preference page's (/p/{token}) */
  preferences: PreferenceService;
  forms: FormService;
  broadcasts: BroadcastService;
  logs: RequestLogService;
  retention: RetentionService;
  metrics: MetricsService;
}
