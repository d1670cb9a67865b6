import type { Config } from './config/config.js';
import type { Logger } from './log/logger.js';
import { AuthThrottle } from './lib/auth-throttle.js';
import type { Clock } from './lib/time.js';
import type { DnsResolver } from './dns/resolver.js';
import type { Store } from './store/store.js';
import { domainSettings, type DomainSettings } from './modules/deliverability/domains/domain-settings.js';
import { KeyAuthenticator } from './modules/account/keys/keys.service.js';
import { blocklistSettings, type BlocklistSettings } from './modules/deliverability/blocklists/blocklists.service.js';
import { trackingKey, type TrackingDeps } from './modules/sending/tracking/tracking.service.js';

// The dependencies of one thread, apart from its services: what both the
// services (build-services.ts) and the roles (start-roles.ts) are built from.

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

export function buildDeps(config: Config, store: Store, clock: Clock, logger: Logger, resolver: DnsResolver): CoreDeps {
  return {
    store,
    clock,
    logger,
    resolver,
    tracking: { store, clock, publicUrl: config.http.publicUrl, key: trackingKey(store) },
    domains: domainSettings(config),
    blocklists: blocklistSettings(config),
    auth: new KeyAuthenticator({ store, clock }),
    authThrottle: new AuthThrottle(
      { failuresPerIp: config.limits.authFailuresPerIp, windowMs: config.limits.authFailureWindowMs },
      clock,
    ),
  };
}
