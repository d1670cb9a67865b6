import type { Config } from '../config/load.js';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../lib/time.js';
import type { Store } from '../store/store.js';
import type { KeyAuthenticator } from '../modules/keys/keys.service.js';
import type { DnsResolver } from '../dns/resolver.js';
import type { DomainSettings } from '../modules/domains/domains.service.js';
import type { EmailDeps } from '../modules/emails/emails.service.js';
import type { WebhookDeps } from '../modules/webhooks/webhooks.service.js';
import type { TrackingDeps } from '../modules/tracking/tracking.service.js';

/** What route handlers may use. Built once by main.ts (or a test) and passed down. */
export interface ApiDeps {
  config: Config;
  store: Store;
  clock: Clock;
  logger: Logger;
  auth: KeyAuthenticator;
  resolver: DnsResolver;
  domains: DomainSettings;
  emails: EmailDeps;
  webhooks: WebhookDeps;
  tracking: TrackingDeps;
}
