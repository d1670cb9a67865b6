import type { Config } from '../../config/load.js';
import type { DomainSettings } from './domains.service.js';

/** The slice of the config the domains module works with. */
export function domainSettings(config: Config): DomainSettings {
  return {
    zone: config.dns.zone,
    hostname: config.outbound.hostname,
    testDomain: config.testDomain,
    trackingAvailable: config.http.publicUrl !== null,
    checkTimeoutMs: 5000,
  };
}
