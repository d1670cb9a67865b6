import dns2 from 'dns2';
import type { Logger } from '../log/logger.js';
import { listenDns, type DnsHandler, type DnsListenOptions } from './listen.js';
import { normalizeName } from './resolver.js';

/**
 * The base64 public key (the p= value) behind <selector>.<token>.<zone>, or
 * null. With selector null: any key under <token>.<zone>, which tells the
 * name of a token (an empty non-terminal) from a name that does not exist.
 */
export type DkimKeyLookup = (token: string, selector: string | null) => Promise<string | null>;

export interface ZoneServerOptions {
  zone: string;
  /** the name server of the zone (NS and SOA MNAME): outbound.hostname */
  nameserver: string;
  host: string;
  port: number;
  lookup: DkimKeyLookup;
  logger?: Logger;
  /** TTL of the key records (dkim.key_ttl): key rotation waits this long before signing with a new key */
  keyTtlSeconds?: number;
  /** TCP limits, listen.ts's defaults (10 s idle, 64 connections) unless given */
  limits?: DnsListenOptions;
}

export interface ZoneServer {
  port: number;
  stop(): Promise<void>;
}

const { Packet } = dns2;
// dns2's typings leave out the RCODE table its Packet carries.
const RCODE = (
  Packet as unknown as {
    RCODE: { NOERROR: number; SERVFAIL: number; NXDOMAIN: number; REFUSED: number; FORMERR: number };
  }
).RCODE;
type Answer = Record<string, unknown> & { name: string; type: number; class: number; ttl: number };

export const dkimTxtValue = (publicKeyBase64: string) => `v=DKIM1; k=rsa; p=${publicKeyBase64}`;

/** A TXT record's character-strings are at most 255 bytes (RFC 1035 §3.3.14); an RSA-2048 key needs two. */
function chunk(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += 255) out.push(text.slice(i, i + 255));
  return out;
}

/**
 * The appliance's authoritative DNS for `dns.zone`: the DKIM TXT records
 * that the customers' CNAMEs point to, plus SOA and NS at the apex, over
 * UDP and TCP. <token>.<zone> holds no record but has names below it, so
 * it exists (NOERROR, no answers: RFC 8020 — an NXDOMAIN there would tell
 * resolvers that the keys below it do not exist either). Everything else in
 * the zone is NXDOMAIN; outside it, REFUSED.
 */
export async function startZoneServer(o: ZoneServerOptions): Promise<ZoneServer> {
  const listener = await listenDns(zoneAnswers(o), o.host, o.port, o.limits);
  return { port: listener.port, stop: () => listener.close() };
}

/** The zone's SOA: at the apex when asked for, and in the authority section of every negative answer. */
function soaRecord(name: string, zone: string, nameserver: string, keyTtlSeconds: number): Answer {
  return {
    name,
    type: Packet.TYPE.SOA,
    class: Packet.CLASS.IN,
    ttl: 3600,
    primary: nameserver,
    admin: `hostmaster.${zone}`,
    serial: Math.floor(Date.now() / 1000),
    refresh: 3600,
    retry: 600,
    expiration: 604800,
    // negative answers are cached briefly, never longer than a key: a key may be added at any
    // moment (RFC 2308), and rotation counts on resolvers seeing it within the key TTL
    minimum: Math.min(60, keyTtlSeconds),
  };
}

/** What the zone answers to one question, as startZoneServer describes; the keys come from o.lookup. */
function zoneAnswers(o: ZoneServerOptions): DnsHandler {
  const zone = normalizeName(o.zone);
  const keyTtl = o.keyTtlSeconds ?? 300;
  const soa = (name: string) => soaRecord(name, zone, o.nameserver, keyTtl);
  return (request, send) => {
    const response = Packet.createResponseFromRequest(request);
    response.header.aa = 1;
    response.header.ra = 0;
    const q = request.questions[0];
    const reply = (rcode: number, answers: Answer[] = [], authority: Answer[] = []) => {
      response.header.rcode = rcode;
      response.answers = answers as unknown as typeof response.answers;
      response.authorities = authority as unknown as typeof response.authorities;
      send(response);
    };
    if (!q) return reply(RCODE.FORMERR);
    const name = normalizeName(q.name);
    if (name !== zone && !name.endsWith(`.${zone}`)) return reply(RCODE.REFUSED);
    const rel = name === zone ? [] : name.slice(0, -(zone.length + 1)).split('.');
    if (rel.length === 0) {
      if (q.type === Packet.TYPE.SOA) return reply(RCODE.NOERROR, [soa(q.name)]);
      if (q.type === Packet.TYPE.NS)
        return reply(RCODE.NOERROR, [
          { name: q.name, type: Packet.TYPE.NS, class: Packet.CLASS.IN, ttl: 3600, ns: o.nameserver },
        ]);
      return reply(RCODE.NOERROR, [], [soa(zone)]);
    }
    if (rel.length > 2) return reply(RCODE.NXDOMAIN, [], [soa(zone)]);
    const [selector, token] = rel.length === 2 ? (rel as [string, string]) : [null, rel[0]];
    o.lookup(token, selector).then(
      (key) => {
        if (!key) return reply(RCODE.NXDOMAIN, [], [soa(zone)]);
        if (selector === null || q.type !== Packet.TYPE.TXT) return reply(RCODE.NOERROR, [], [soa(zone)]);
        reply(RCODE.NOERROR, [
          { name: q.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: keyTtl, data: chunk(dkimTxtValue(key)) },
        ]);
      },
      (e: unknown) => {
        o.logger?.warn({ err: e, name }, 'DKIM key lookup failed');
        reply(RCODE.SERVFAIL);
      },
    );
  };
}
