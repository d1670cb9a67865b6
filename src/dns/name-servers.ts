import { Resolver } from 'node:dns/promises';
import type { ResolverOptions } from './resolver.js';

/**
 * The NS records of a zone through dns.resolvers. Only the operator's checks
 * ask for them (is the DKIM zone delegated?), so the DnsResolver the rest of
 * the appliance takes stays as it is.
 */
export function createNameServerLookup(opts: ResolverOptions): (zone: string) => Promise<string[]> {
  const r = new Resolver({ timeout: opts.timeoutMs ?? 3000, tries: opts.tries ?? 2 });
  if (opts.servers.length) r.setServers(opts.servers.map((s) => s.trim()));
  return (zone) => r.resolveNs(zone);
}
