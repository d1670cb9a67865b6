import { isIP } from 'node:net';
import { isNoRecord, normalizeName, type DnsResolver } from '../dns/resolver.js';

export interface MxHost {
  /** the MX name (for TLS SNI and logs) */
  name: string;
  /** its addresses, IPv4 first */
  addresses: string[];
}

export type Destinations =
  | { kind: 'hosts'; hosts: MxHost[] }
  | { kind: 'null_mx' }
  | { kind: 'no_domain' }
  | { kind: 'dns_error'; reason: string };

/**
 * Where a domain takes mail (RFC 5321 §5.1): its MX hosts by preference
 * (ties kept in DNS order, so that tests are deterministic), each resolved
 * to addresses through dns.resolvers; no MX but an address record → the
 * domain itself; a null MX (RFC 7505) or NXDOMAIN → permanent; a DNS
 * failure → temporary.
 */
export async function resolveDestinations(domain: string, resolver: DnsResolver): Promise<Destinations> {
  let mx: Array<{ exchange: string; priority: number }>;
  try {
    mx = await resolver.resolveMx(domain);
  } catch (e) {
    if (!isNoRecord(e))
      return {
        kind: 'dns_error',
        reason: `MX lookup failed (${(e as { code?: string }).code ?? (e as Error).message})`,
      };
    if ((e as { code?: string }).code === 'ENOTFOUND') return { kind: 'no_domain' };
    mx = [];
  }
  if (mx.length === 1 && (mx[0].exchange === '' || mx[0].exchange === '.') && mx[0].priority === 0)
    return { kind: 'null_mx' };
  const names = mx.length
    ? [...mx]
        .sort((a, b) => a.priority - b.priority)
        .map((m) => normalizeName(m.exchange))
        .filter(Boolean)
    : [domain];
  const hosts: MxHost[] = [];
  let lastError: string | null = null;
  for (const name of names) {
    try {
      const addresses = await addressesOf(name, resolver);
      if (addresses.length) hosts.push({ name, addresses });
    } catch (e) {
      lastError = (e as Error).message;
    }
  }
  if (hosts.length) return { kind: 'hosts', hosts };
  if (lastError) return { kind: 'dns_error', reason: lastError };
  // An implicit MX without addresses, or MX hosts that do not resolve: nothing can be delivered.
  return mx.length ? { kind: 'dns_error', reason: `no MX host of ${domain} has an address` } : { kind: 'no_domain' };
}

async function addressesOf(name: string, resolver: DnsResolver): Promise<string[]> {
  if (isIP(name)) return [name];
  const settle = async (p: Promise<string[]>) => {
    try {
      return await p;
    } catch (e) {
      if (isNoRecord(e)) return [];
      throw new Error(`address lookup of ${name} failed (${(e as { code?: string }).code ?? (e as Error).message})`, {
        cause: e,
      });
    }
  };
  const [v4, v6] = await Promise.all([settle(resolver.resolve4(name)), settle(resolver.resolve6(name))]);
  return [...v4, ...v6];
}
