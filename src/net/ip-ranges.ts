import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

// Addresses an outgoing request to a user-given URL must never reach (SSRF):
// everything that is not globally routable unicast (RFC 6890 special-purpose
// registries). Forms that embed an IPv4 address are judged by that address.
const BLOCKED_V4 = [
  '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24', '192.0.2.0/24', '192.88.99.0/24',
  '192.168.0.0/16', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '224.0.0.0/4', '240.0.0.0/4',
].map((c) => ipaddr.IPv4.parseCIDR(c));

const BLOCKED_V6 = ['64:ff9b:1::/48', '100::/64', '2001::/23', '2001:db8::/32', '3fff::/20'].map((c) => ipaddr.IPv6.parseCIDR(c));
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/** True only for a globally routable unicast address; anything unparseable is not. */
export function isPublicAddress(text: string): boolean {
  const raw = text.trim().replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  // only canonical forms: '1.2.3' or octal-looking quads are not addresses a resolver returns
  if (!isIP(raw)) return false;
  const addr = ipaddr.parse(raw);
  if (addr.kind() === 'ipv4') return isPublicV4(addr as ipaddr.IPv4);
  const v6 = addr as ipaddr.IPv6;
  const bytes = v6.toByteArray();
  const v4At = (offset: number) => new ipaddr.IPv4(bytes.slice(offset, offset + 4));
  // ::ffff:a.b.c.d (mapped) and 64:ff9b::a.b.c.d (NAT64): the IPv4 address inside decides.
  if (v6.isIPv4MappedAddress()) return isPublicV4(v6.toIPv4Address());
  if (v6.match(ipaddr.IPv6.parseCIDR('64:ff9b::/96'))) return isPublicV4(v4At(12));
  // 6to4 (2002::/16) carries an IPv4 address in bits 16..48.
  if (v6.match(ipaddr.IPv6.parseCIDR('2002::/16'))) return isPublicV4(v4At(2));
  // ::/96 (IPv4-compatible, deprecated), ::, ::1, ULA, link-local, multicast all fall outside 2000::/3.
  if (!v6.match(GLOBAL_UNICAST_V6)) return false;
  return !BLOCKED_V6.some((cidr) => v6.match(cidr));
}

function isPublicV4(a: ipaddr.IPv4): boolean {
  return !BLOCKED_V4.some((cidr) => a.match(cidr));
}
