import type { DomainSettings } from './domains.service.js';

/** The keys of the config the domains module works with (the caller passes its config; only these are read). */
export interface DomainConfigSlice {
  dns: { zone: string };
  outbound: { hostname: string };
  testDomain: string;
  http: { publicUrl: string | null };
  dkim: { rotateAfterMs: number; retireAfterMs: number; keyTtlMs: number };
  blocklists: { ips: string[] };
}

export function domainSettings(config: DomainConfigSlice): DomainSettings {
  const { rotateAfterMs, retireAfterMs, keyTtlMs } = config.dkim;
  return {
    zone: config.dns.zone,
    hostname: config.outbound.hostname,
    testDomain: config.testDomain,
    trackingAvailable: config.http.publicUrl !== null,
    checkTimeoutMs: 5000,
    dkim: { rotateAfterMs, retireAfterMs, keyTtlMs },
    outboundIps: config.blocklists.ips,
  };
}
