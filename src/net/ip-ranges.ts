import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

// Addresses an outgoing request to a user-given URL must never reach (SSRF):
// everything that is not globally routable unicast, after the IANA
// special-purpose registries (RFC 6890 and its updates).
const BLOCKED_V4 = [
  '0.0.0.0/8', // "this network"; 0.0.0.0 reaches the local host on Linux
  '10.0.0.0/8',
  '100.64.0.0/10', // CGNAT, RFC 6598
  '127.0.0.0/8',
  '169.254.0.0/16', // link-local, cloud metadata services
  '172.16.0.0/12',
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24',
  '192.88.99.0/24', // deprecated 6to4 relay anycast, RFC 7526
  '192.168.0.0/16',
  '198.18.0.0/15', // benchmarking, RFC 2544
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, 255.255.255.255 included
].map((c) => ipaddr.IPv4.parseCIDR(c));

// Only 2000::/3 is allocated as global unicast: ::, ::1, ::/96, 100::/64,
// 64:ff9b:1::/48, fc00::/7, fe80::/10, fec0::/10 and ff00::/8 all lie outside it.
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');
const BLOCKED_V6 = [
  // IETF protocol assignments (Teredo, ORCHID, AMT, AS112, …). The few
  // globally reachable bits in it are no webhook's home, so all of it stays shut.
  '2001::/23',
  '2001:db8::/32', // documentation, RFC 3849
  '3fff::/20', // documentation, RFC 9637
].map((c) => ipaddr.IPv6.parseCIDR(c));
const NAT64 = ipaddr.IPv6.parseCIDR('64:ff9b::/96'); // RFC 6052: a.b.c.d in the last 32 bits
const SIX_TO_FOUR = ipaddr.IPv6.parseCIDR('2002::/16'); // RFC 3056: a.b.c.d in bits 16..48

/**
 * True only for a globally routable unicast address; anything unparseable
 * is not. Takes the forms a resolver or a URL host gives: a bracketed IPv6
 * literal (`[::1]`) and a zone id (`fe80::1%eth0`) are accepted here so no
 * caller has to remember to strip them. Forms that carry an IPv4 address
 * (mapped, NAT64, 6to4) are judged by that address.
 */
export function isPublicAddress(text: string): boolean {
  const trimmed = text.trim();
  const unbracketed = /^\[.*\]$/.test(trimmed) ? trimmed.slice(1, -1) : trimmed;
  const raw = unbracketed.includes(':') ? unbracketed.replace(/%.*$/, '') : unbracketed;
  // node's isIP takes canonical forms only: '1.2.3', '0x7f.1' or '017.0.0.1' are
  // no address a resolver returns, and ipaddr.js would read them liberally.
  const version = isIP(raw);
  if (version === 4) return isPublicV4(ipaddr.IPv4.parse(raw));
  if (version !== 6) return false;
  // ipaddr.js reads '::a.b.c.d' as ::ffff:a.b.c.d; the WHATWG host parser
  // first gives the exact all-hex form, so ::/96 stays ::/96.
  const v6 = canonicalV6(raw);
  if (!v6) return false;
  if (v6.isIPv4MappedAddress()) return isPublicV4(v6.toIPv4Address());
  const bytes = v6.toByteArray();
  const v4At = (offset: number) => new ipaddr.IPv4(bytes.slice(offset, offset + 4));
  if (v6.match(NAT64)) return isPublicV4(v4At(12));
  if (v6.match(SIX_TO_FOUR)) return isPublicV4(v4At(2));
  if (!v6.match(GLOBAL_UNICAST_V6)) return false;
  return !BLOCKED_V6.some((cidr) => v6.match(cidr));
}

function canonicalV6(raw: string): ipaddr.IPv6 | null {
  try {
    return ipaddr.IPv6.parse(new URL(`http://[${raw}]`).hostname.slice(1, -1));
  } catch {
    return null;
  }
}

function isPublicV4(a: ipaddr.IPv4): boolean {
  return !BLOCKED_V4.some((cidr) => a.match(cidr));
}

/**
 * The address a socket should be opened to, or null when the text is no
 * address. An IPv4-mapped address is opened as the IPv4 address it carries,
 * so the connection does not depend on the host's dual-stack settings.
 */
export function connectTarget(text: string): { address: string; family: 4 | 6 } | null {
  const raw = text.trim().replace(/^\[(.*)\]$/, '$1');
  const version = isIP(raw);
  if (version === 4) return { address: raw, family: 4 };
  const v6 = version === 6 ? canonicalV6(raw.replace(/%.*$/, '')) : null;
  if (!v6) return null;
  if (v6.isIPv4MappedAddress()) return { address: v6.toIPv4Address().toString(), family: 4 };
  return { address: v6.toString(), family: 6 };
}
