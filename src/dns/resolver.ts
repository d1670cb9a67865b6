import ipaddr from 'ipaddr.js';
import { Resolver } from 'node:dns/promises';

export interface MxRecord {
  exchange: string;
  priority: number;
}

/**
 * Every DNS lookup the appliance makes goes through one of these (CONTRACT §4:
 * `dns.resolvers` serve MX, verification, webhook and attachment hosts, PTR).
 * Functions take it as an argument, so tests point it at a dns2 server.
 */
export interface DnsResolver {
  resolveMx(name: string): Promise<MxRecord[]>;
  resolveTxt(name: string): Promise<string[][]>;
  resolveCname(name: string): Promise<string[]>;
  resolve4(name: string): Promise<string[]>;
  resolve6(name: string): Promise<string[]>;
  reverse(ip: string): Promise<string[]>;
}

export interface ResolverOptions {
  /** `host:port` list (dns.resolvers); empty = the system's resolvers */
  servers: readonly string[];
  /** per try, in ms */
  timeoutMs?: number;
  tries?: number;
}

export function createResolver(opts: ResolverOptions): DnsResolver {
  const r = new Resolver({ timeout: opts.timeoutMs ?? 3000, tries: opts.tries ?? 2 });
  if (opts.servers.length) r.setServers(opts.servers.map(normalizeServer));
  return {
    resolveMx: (n) => r.resolveMx(n),
    resolveTxt: (n) => r.resolveTxt(n),
    resolveCname: (n) => r.resolveCname(n),
    resolve4: (n) => r.resolve4(n),
    resolve6: (n) => r.resolve6(n),
    // the PTR query itself: Resolver.reverse answers from /etc/hosts first, which knows loopback and the machine's own names
    reverse: (ip) => r.resolvePtr(arpaName(ip)),
  };
}

/** The name of an address's PTR record: 4.3.2.1.in-addr.arpa, or the 32 nibbles of an IPv6 address under ip6.arpa. */
export function arpaName(ip: string): string {
  let addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress())
    addr = (addr as ipaddr.IPv6).toIPv4Address();
  if (addr.kind() === 'ipv4') return `${addr.toByteArray().reverse().join('.')}.in-addr.arpa`;
  const hex = addr
    .toByteArray()
    .map((b) => b.toString(16).padStart(2, '0'))
    .join('');
  return `${hex.split('').reverse().join('.')}.ip6.arpa`;
}

/** '[::1]:53' and '127.0.0.1:53' are what c-ares takes; a bare IPv6 address needs no brackets. */
function normalizeServer(s: string): string {
  return s.trim();
}

/** The name or the record type does not exist: an answer, not a failure of DNS. */
export function isNoRecord(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === 'ENOTFOUND' || code === 'ENODATA' || code === 'NXDOMAIN' || code === 'ENONAME';
}

export const normalizeName = (name: string): string => name.trim().replace(/\.$/, '').toLowerCase();
