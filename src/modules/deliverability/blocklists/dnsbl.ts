import ipaddr from 'ipaddr.js';
import { domainToASCII } from 'node:url';

/**
 * DNS blocklists (RFC 5782): a list is a zone; a target is listed when
 * `<target reversed or as is>.<zone>` has A records, clear on NXDOMAIN or no
 * data. Pure: what an answer means is in dnsbl-answers.ts, the lookups in
 * src/dns/dnsbl-lookup.ts, the asking, pacing and caching in
 * blocklist-checker.ts.
 */
export type BlocklistKind = 'ip' | 'domain';

export interface Blocklist {
  zone: string;
  kind: BlocklistKind;
  name?: string;
}

export type ListingState = 'listed' | 'clear' | 'error';

/**
 * Well-known public lists and what their answers mean. Every one of them is
 * free only for low volume through a resolver they can attribute to you.
 *
 * - zen.spamhaus.org (SBL+XBL+PBL), dbl.spamhaus.org: listings 127.0.0.2 SBL,
 *   .3 CSS, .4 XBL, .9 DROP, .10/.11 PBL, .30 BCL; DBL 127.0.1.2-.6 and
 *   127.0.1.102-.106; 127.0.1.255 = an IP asked of the DBL (an error).
 *   127.255.255.0/24 holds errors, never listings: .252 a mistyped zone, .254
 *   a query through a public/open resolver (8.8.8.8, 1.1.1.1, most cloud
 *   resolvers), .255 too many queries. Free for low-volume non-commercial
 *   use only; others need the Data Query Service.
 *   https://docs.spamhaus.com/datasets/docs/source/10-data-type-documentation/datasets/040-zones.html
 *   https://www.spamhaus.org/news/article/788/
 *   https://www.spamhaus.com/resource-center/help-for-spamhaus-projects-legacy-blocklist-users
 * - b.barracudacentral.org: 127.0.0.2; answers only resolvers whose address
 *   was registered with Barracuda first. http://www.barracudacentral.org/rbl/how-to-use
 * - bl.spamcop.net: 127.0.0.2, time-based (listings expire 24 h after the
 *   last report). http://spamcop.net/bl.shtml
 * - psbl.surriel.com: 127.0.0.2, free to anybody. http://psbl.surriel.com/howto/
 * - multi.uribl.com: bitmask of the last octet, 2 black, 4 grey, 8 red;
 *   127.0.0.1 = query refused (public or busy resolver), never a listing.
 *   https://uribl.com/refused.shtml
 * - multi.surbl.org: bitmask, 8 PH, 16 MW, 64 ABUSE, 128 CR (4 DM, 32 CT
 *   added later); the TXT is for humans only. 127.0.0.1 = access blocked
 *   (SpamAssassin's and Rspamd's SURBL_BLOCKED; not on SURBL's own pages here).
 *   https://www.securityzones.net/new-return-codes-added-to-surbl-multi/
 *   https://github.com/ubicloud/ubicloud/pull/4908
 */
export const DEFAULT_BLOCKLISTS: readonly Blocklist[] = [
  { zone: 'zen.spamhaus.org', kind: 'ip', name: 'Spamhaus ZEN' },
  { zone: 'b.barracudacentral.org', kind: 'ip', name: 'Barracuda BRBL' },
  { zone: 'bl.spamcop.net', kind: 'ip', name: 'SpamCop' },
  { zone: 'psbl.surriel.com', kind: 'ip', name: 'PSBL' },
  { zone: 'dbl.spamhaus.org', kind: 'domain', name: 'Spamhaus DBL' },
  { zone: 'multi.uribl.com', kind: 'domain', name: 'URIBL' },
  { zone: 'multi.surbl.org', kind: 'domain', name: 'SURBL' },
];

export const normalizeTarget = (t: string): string => t.trim().replace(/\.$/, '').toLowerCase();

// RFC 1035 §2.3.4 label and name limits; `_` allowed since real zones have it.
const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;
const MAX_NAME = 253;
// 32 nibbles and their dots (RFC 5782 §2.4), the longest prefix an IP list adds.
const IPV6_PREFIX = 64;

function isDomainName(name: string): boolean {
  if (!name || name.length > MAX_NAME) return false;
  const labels = name.split('.');
  return labels.length >= 2 && labels.every((l) => LABEL.test(l)) && !/^[0-9]+$/.test(labels.at(-1)!);
}

/** IPv4 in dotted quads or any IPv6 form; an IPv4-mapped IPv6 address is its IPv4 address, which is what lists hold. */
function parseIp(target: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (ipaddr.IPv4.isValidFourPartDecimal(target)) return ipaddr.IPv4.parse(target);
  if (!target.includes(':') || !ipaddr.IPv6.isValid(target)) return null;
  const v6 = ipaddr.IPv6.parse(target);
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address() : v6;
}

/** 'ip', 'domain', or null for something that is neither. */
export function targetKind(target: string): BlocklistKind | null {
  const t = normalizeTarget(target);
  if (parseIp(t)) return 'ip';
  return isDomainName(domainToASCII(t)) ? 'domain' : null;
}

/**
 * The name to ask: reversed octets (IPv4) or 32 reversed nibbles (IPv6) for IP
 * lists (RFC 5782 §2.1, §2.4), the domain itself for domain lists (§2.2).
 * null when the target's kind is not the list's or the name would be too long.
 * Domain lists such as URIBL hold registered domains, not host names: the
 * caller decides which name of a domain it checks.
 */
export function queryName(target: string, list: Blocklist): string | null {
  const t = normalizeTarget(target);
  const zone = normalizeTarget(list.zone);
  const ip = parseIp(t);
  let prefix: string;
  if (list.kind === 'ip') {
    if (!ip) return null;
    const bytes = ip.toByteArray();
    prefix =
      ip.kind() === 'ipv4'
        ? bytes.reverse().join('.')
        : bytes
            .flatMap((b) => [b >> 4, b & 15])
            .reverse()
            .map((n) => n.toString(16))
            .join('.');
  } else {
    if (ip) return null;
    prefix = domainToASCII(t);
    if (!isDomainName(prefix)) return null;
  }
  const name = `${prefix}.${zone}`;
  return name.length <= MAX_NAME ? name : null;
}

export type BlocklistEntryCheck = { ok: true; list: Blocklist } | { ok: false; message: string };

/** One operator-configured entry (`where` names it, e.g. `blocklists[2]`); unknown keys are refused like the config schema's. */
export function validateBlocklist(entry: unknown, where: string): BlocklistEntryCheck {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
    return { ok: false, message: `${where}: must be an object with zone and kind` };
  const e = entry as Record<string, unknown>;
  const zone = typeof e.zone === 'string' ? normalizeTarget(e.zone) : '';
  const fail = (why: string): BlocklistEntryCheck => ({
    ok: false,
    message: `${zone ? `${where} (${zone})` : where}: ${why}`,
  });
  const unknown = Object.keys(e).filter((k) => !['zone', 'kind', 'name'].includes(k));
  if (unknown.length)
    return fail(`unknown key ${unknown.map((k) => `'${k}'`).join(', ')} (zone, kind and name are known)`);
  if (!zone) return fail('zone must be a DNS name such as zen.spamhaus.org');
  if (e.kind !== 'ip' && e.kind !== 'domain') return fail(`kind must be 'ip' or 'domain'`);
  if (parseIp(zone) || !isDomainName(zone))
    return fail(`zone is not a DNS name (letters, digits, '-' and '_' in dot-separated labels, two at least)`);
  const room = e.kind === 'ip' ? MAX_NAME - IPV6_PREFIX : MAX_NAME - 4;
  if (zone.length > room)
    return fail(`zone is longer than ${room} characters, which leaves no room for the names asked`);
  if (e.name !== undefined && (typeof e.name !== 'string' || !e.name.trim()))
    return fail('name must be a non-empty string');
  const list: Blocklist = { zone, kind: e.kind };
  if (typeof e.name === 'string') list.name = e.name.trim();
  return { ok: true, list };
}

/** Every entry, and no zone twice (the second would only double the queries). */
export function validateBlocklists(
  entries: unknown,
  where = 'blocklists',
): { ok: true; lists: Blocklist[] } | { ok: false; message: string } {
  if (!Array.isArray(entries)) return { ok: false, message: `${where}: must be a list` };
  const lists: Blocklist[] = [];
  for (const [i, entry] of entries.entries()) {
    const r = validateBlocklist(entry, `${where}[${i}]`);
    if (!r.ok) return r;
    if (lists.some((l) => l.zone === r.list.zone))
      return { ok: false, message: `${where}[${i}] (${r.list.zone}): the zone is listed twice` };
    lists.push(r.list);
  }
  return { ok: true, lists };
}

export interface ListingPair {
  target: string;
  zone: string;
}

export type PairState = ListingPair & { state: ListingState };

const pairKey = (p: ListingPair) => `${normalizeTarget(p.target)} ${normalizeTarget(p.zone)}`;

/**
 * The pairs that became listed and those that became clear, which decide the
 * domain.blocklisted / domain.delisted events. A pair seen for the first time
 * and listed counts as newly listed; an error on either side is no change (a
 * refusing resolver neither lists nor delists anybody): keep `lastKnown` as
 * the previous state so an error in between does not reset it.
 */
export function changes(
  previous: readonly PairState[],
  current: readonly PairState[],
): { listed: ListingPair[]; cleared: ListingPair[] } {
  const before = new Map(previous.map((p) => [pairKey(p), p.state]));
  const listed: ListingPair[] = [];
  const cleared: ListingPair[] = [];
  for (const c of current) {
    const was = before.get(pairKey(c));
    if (c.state === 'listed' && (was === undefined || was === 'clear')) listed.push({ target: c.target, zone: c.zone });
    if (c.state === 'clear' && was === 'listed') cleared.push({ target: c.target, zone: c.zone });
  }
  return { listed, cleared };
}

/** The states to compare the next check with: the current ones, except that an error keeps the state known before it. */
export function lastKnown<T extends PairState>(previous: readonly T[], current: readonly T[]): T[] {
  const before = new Map(previous.map((p) => [pairKey(p), p]));
  return current.map((c) => (c.state === 'error' ? (before.get(pairKey(c)) ?? c) : c));
}
