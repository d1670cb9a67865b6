import { Resolver } from 'node:dns/promises';
import { isNoRecord, type ResolverOptions } from './resolver.js';

export interface ARecords {
  addresses: string[];
  /** the smallest TTL of the records */
  ttlSeconds: number;
}

/**
 * The two questions a blocklist check asks, through the operator's
 * dns.resolvers. Separate from DnsResolver because a listing's TTL decides
 * how long it is believed, and DnsResolver drops TTLs.
 */
export interface DnsblLookup {
  /** the A records of `name`, or 'nxdomain' when the name or its A records do not exist */
  lookupA(name: string): Promise<ARecords | 'nxdomain'>;
  /** the TXT strings of `name`, each record's chunks joined; [] when there are none */
  lookupTxt(name: string): Promise<string[]>;
}

/** DNS gave no answer: SERVFAIL, REFUSED, a timeout, an unreachable server. `code` is c-ares's (ESERVFAIL, EREFUSED, ETIMEOUT, ECONNREFUSED, …). */
export class DnsLookupError extends Error {
  readonly code: string;

  constructor(code: string, name: string) {
    super(`${name}: ${describeDnsCode(code)}`);
    this.name = 'DnsLookupError';
    this.code = code;
  }
}

const DESCRIPTIONS: Record<string, string> = {
  ESERVFAIL: 'the resolver answered SERVFAIL',
  EREFUSED: 'the resolver refused the query',
  ETIMEOUT: 'no answer in time',
  ECONNREFUSED: 'the resolver could not be reached',
  EFORMERR: 'the resolver could not read the query (FORMERR)',
  EBADRESP: 'the answer was malformed',
};

export const describeDnsCode = (code: string): string => DESCRIPTIONS[code] ?? `DNS error ${code}`;

function failure(err: unknown, name: string): DnsLookupError {
  const code = (err as { code?: unknown }).code;
  return new DnsLookupError(typeof code === 'string' ? code : 'EUNKNOWN', name);
}

export function createDnsblLookup(opts: ResolverOptions): DnsblLookup {
  const r = new Resolver({ timeout: opts.timeoutMs ?? 3000, tries: opts.tries ?? 2 });
  if (opts.servers.length) r.setServers(opts.servers.map((s) => s.trim()));
  return {
    async lookupA(name) {
      try {
        const records = await r.resolve4(name, { ttl: true });
        if (!records.length) return 'nxdomain';
        return { addresses: records.map((x) => x.address), ttlSeconds: Math.min(...records.map((x) => x.ttl)) };
      } catch (e) {
        // NODATA counts with NXDOMAIN: a list that has the name but no A record does not list it (RFC 5782 §2.1)
        if (isNoRecord(e)) return 'nxdomain';
        throw failure(e, name);
      }
    },
    async lookupTxt(name) {
      try {
        return (await r.resolveTxt(name)).map((chunks) => chunks.join(''));
      } catch (e) {
        if (isNoRecord(e)) return [];
        throw failure(e, name);
      }
    },
  };
}
