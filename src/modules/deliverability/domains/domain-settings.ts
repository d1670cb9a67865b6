import type { Clock } from '../../../lib/time.js';
import type { Store } from '../../../store/store.js';
import type { DnsResolver } from '../../../dns/resolver.js';
import type { RotationSettings } from './dkim-rotation.js';

export interface DomainSettings {
  /** dns.zone */
  zone: string;
  /** outbound.hostname */
  hostname: string;
  /** test_domain: reserved for simulated recipients */
  testDomain: string;
  /** http.public_url is set, so tracking links can be served */
  trackingAvailable: boolean;
  /** per DNS check */
  checkTimeoutMs: number;
  /** dkim.*: key rotation */
  dkim: RotationSettings;
  /** blocklists.ips: the appliance's outbound addresses when configured (else outbound.hostname's) */
  outboundIps: readonly string[];
}

/** What the domains module's services are given. */
export interface DomainDeps {
  store: Store;
  clock: Clock;
  resolver: DnsResolver;
  domains: DomainSettings;
}

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
