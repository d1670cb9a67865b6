import type { Logger } from '../log/logger.js';
import { startZoneServer, type DkimKeyLookup } from '../dns/zone-server.js';
import type { Role } from './role.js';

/** dns.zone, dns.server.host/port, and outbound.hostname as the zone's name server. */
export interface DnsSlice {
  zone: string;
  nameserver: string;
  host: string;
  port: number;
  /** dkim.key_ttl in seconds */
  keyTtlSeconds?: number;
}

/** The authoritative DNS server of the DKIM zone (CONTRACT §5). */
export async function startDns(
  slice: DnsSlice,
  lookup: DkimKeyLookup,
  logger: Logger,
): Promise<Role & { port: number }> {
  const zone = await startZoneServer({ ...slice, lookup, logger });
  logger.info({ zone: slice.zone, port: zone.port }, 'DKIM zone DNS server listening');
  return { name: 'dns', port: zone.port, stop: () => zone.stop() };
}
