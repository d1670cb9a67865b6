import ipaddr from 'ipaddr.js';
import { normalizeTarget, type Blocklist, type ListingState } from './dnsbl.js';

// What a list's answer means (RFC 5782, and each operator's own codes, listed
// at DEFAULT_BLOCKLISTS in dnsbl.ts) and how long it stands. Pure.

export interface Verdict {
  state: ListingState;
  codes: string[];
  reason?: string;
}

type Family = 'spamhaus' | 'uribl' | 'surbl' | 'generic';

const endsWith = (zone: string, domain: string) => zone === domain || zone.endsWith(`.${domain}`);

/** Which operator's codes apply; Spamhaus DQS zones (<key>.zen.dq.spamhaus.net) answer like the public mirrors. */
function familyOf(zone: string): Family {
  const z = normalizeTarget(zone);
  if (endsWith(z, 'spamhaus.org') || endsWith(z, 'spamhaus.net')) return 'spamhaus';
  if (endsWith(z, 'uribl.com')) return 'uribl';
  if (endsWith(z, 'surbl.org')) return 'surbl';
  return 'generic';
}

const OWN_RESOLVER = 'use your own recursive resolver in dns.resolvers';

const SPAMHAUS_ERRORS: Record<string, string> = {
  '127.255.255.252': 'Spamhaus answers 127.255.255.252 to a mistyped zone name: check the zone of this list',
  '127.255.255.254': `the list refuses queries through this resolver (Spamhaus 127.255.255.254: a public or open resolver): ${OWN_RESOLVER}, or the Spamhaus Data Query Service`,
  '127.255.255.255': `the list refuses this resolver for too many queries (Spamhaus 127.255.255.255): ${OWN_RESOLVER}, or the Spamhaus Data Query Service`,
  '127.0.1.255': 'Spamhaus DBL answers 127.0.1.255 to an IP address: it lists domains only',
};

const REFUSED_127_0_0_1: Record<Family, string> = {
  uribl: `the list refuses queries through this resolver (URIBL 127.0.0.1: query refused, a public or busy resolver): ${OWN_RESOLVER}`,
  surbl: `the list refuses queries through this resolver (SURBL 127.0.0.1: access blocked): ${OWN_RESOLVER}`,
  spamhaus: 'Spamhaus answered 127.0.0.1, which is no listing code of it',
  generic: `the list answered 127.0.0.1, which lists use to refuse a querier or to announce they are shut down, never as a listing: ${OWN_RESOLVER}`,
};

/** The error an answer stands for, or null when it is a listing code. */
function errorOf(family: Family, zone: string, a: string): string | null {
  if (!ipaddr.IPv4.isValidFourPartDecimal(a) || !a.startsWith('127.')) {
    return `unexpected answer ${a}, outside 127.0.0.0/8: a resolver that rewrites answers (NXDOMAIN redirection, filtering) or a list that is gone`;
  }
  if (a === '127.0.0.1') return REFUSED_127_0_0_1[family];
  const [, second, third, fourth] = a.split('.').map(Number) as [number, number, number, number];
  if (family === 'spamhaus') {
    if (SPAMHAUS_ERRORS[a]) return SPAMHAUS_ERRORS[a];
    if (second === 255 && third === 255)
      return `Spamhaus error code ${a} (127.255.255.0/24 holds errors, never listings)`;
    if (second === 0 && third <= 2 && fourth >= 2) return null;
  } else if (second === 0 && third === 0 && fourth >= 2) {
    return null;
  }
  return `answer ${a} is no listing code of ${zone}`;
}

const BITS: Partial<Record<Family, [number, string][]>> = {
  uribl: [
    [2, 'black'],
    [4, 'grey'],
    [8, 'red'],
  ],
  surbl: [
    [4, 'DM'],
    [8, 'PH'],
    [16, 'MW'],
    [32, 'CT'],
    [64, 'ABUSE'],
    [128, 'CR'],
  ],
};

/** The sublists a bitmask answer names, for a reason when the list gave no TXT. */
function sublists(family: Family, codes: string[]): string[] {
  const bits = BITS[family];
  if (!bits) return [];
  const mask = codes.reduce((m, c) => m | Number(c.split('.')[3]), 0);
  return bits.filter(([bit]) => mask & bit).map(([, name]) => name);
}

/**
 * What one answer means: NXDOMAIN or no records = clear; listing codes =
 * listed; an error code of the list, or anything unexpected, = error, which
 * never counts as listed nor as clear. One error among the records makes the
 * whole answer an error: a listing is not believed from a refusing list.
 */
export function judgeAnswer(list: Blocklist, answer: readonly string[] | 'nxdomain', txt?: readonly string[]): Verdict {
  if (answer === 'nxdomain' || answer.length === 0) return { state: 'clear', codes: [] };
  const family = familyOf(list.zone);
  const codes = [...new Set(answer)].sort();
  const errors = [...new Set(codes.map((a) => errorOf(family, list.zone, a)).filter((e): e is string => e !== null))];
  if (errors.length) return { state: 'error', codes, reason: errors.join('; ') };
  const text = (txt ?? [])
    .map((t) => t.trim())
    .filter(Boolean)
    .join(' ');
  const named = sublists(family, codes);
  const reason = text || (named.length ? `listed on ${named.join(', ')}` : '');
  return reason ? { state: 'listed', codes, reason } : { state: 'listed', codes };
}

export const CACHE_SECONDS = { min: 5 * 60, max: 24 * 3600, error: 5 * 60, nxdomain: 3600 } as const;

/**
 * How long an answer stands: its TTL kept between 5 minutes (lists answer
 * with TTLs of a few minutes; a monitor need not follow them) and a day;
 * errors 5 minutes, so a fixed resolver is noticed soon; NXDOMAIN an hour,
 * since node:dns does not show the SOA minimum that would say (RFC 2308 §5).
 */
export function cacheSeconds(state: ListingState, answer: 'nxdomain' | 'records', ttlSeconds: number): number {
  if (state === 'error') return CACHE_SECONDS.error;
  if (answer === 'nxdomain') return CACHE_SECONDS.nxdomain;
  return Math.min(CACHE_SECONDS.max, Math.max(CACHE_SECONDS.min, Math.floor(ttlSeconds)));
}
