import { randomInt } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { getServers } from 'node:dns';
import { connect, isIP } from 'node:net';
import dns2 from 'dns2';
import type { ResolverOptions } from './resolver.js';

// TLSA lookups for DANE (RFC 7672), with the one bit Node's resolver does not expose: whether
// the validating resolver of dns.resolvers authenticated the answer (AD, RFC 4035 §3.2.3). Queries
// go over UDP (TCP when the answer is truncated) to the same servers as every other lookup.

const { Packet } = dns2;
const TYPE_A = 1;
const TYPE_TLSA = 52;
const NOERROR = 0;
const NXDOMAIN = 3;
/** the EDNS payload size offered: no fragmentation on the internet's paths (DNS flag day 2020) */
const PAYLOAD = 1232;

/**
 * secure: a DNSSEC-validated, non-empty TLSA RRset (its RDATA, unparsed); insecure: none, or not
 * validated (DANE does not apply, RFC 7672 §2.2); failed: the MX host's zone is signed but the
 * TLSA lookup failed, so the host cannot be used (RFC 7672 §2.2.2).
 */
export type TlsaAnswer =
  { kind: 'secure'; rdata: Buffer[] } | { kind: 'insecure' } | { kind: 'failed'; reason: string };

export interface TlsaLookup {
  /** the TLSA records of port 25 of an MX host (`_25._tcp.<host>`, RFC 7672 §2.2.1) */
  lookup(host: string): Promise<TlsaAnswer>;
}

interface Answer {
  rcode: number;
  authenticated: boolean;
  rdata: Buffer[];
}

interface Server {
  host: string;
  port: number;
}

export function createTlsaLookup(opts: ResolverOptions): TlsaLookup {
  const servers = (opts.servers.length ? opts.servers : getServers()).map(parseServer);
  const ask = (name: string, type: number) => askAll(servers, name, type, opts.timeoutMs ?? 3000, opts.tries ?? 2);
  return {
    async lookup(host) {
      const name = `_25._tcp.${host.replace(/\.$/, '')}`;
      const [tlsa, address] = await Promise.allSettled([ask(name, TYPE_TLSA), ask(host, TYPE_A)]);
      if (tlsa.status === 'fulfilled') {
        const a = tlsa.value;
        if (a.rcode === NOERROR && a.authenticated && a.rdata.length) return { kind: 'secure', rdata: a.rdata };
        if (a.rcode === NOERROR || a.rcode === NXDOMAIN) return { kind: 'insecure' };
      }
      // A failed TLSA lookup only matters where DANE could apply: a host whose own address
      // records validate (RFC 7672 §2.2.2); elsewhere it is as if there were no TLSA records.
      const signed = address.status === 'fulfilled' && address.value.authenticated;
      if (!signed) return { kind: 'insecure' };
      return {
        kind: 'failed',
        reason: tlsa.status === 'fulfilled' ? `rcode ${rcodeName(tlsa.value.rcode)}` : (tlsa.reason as Error).message,
      };
    },
  };
}

function rcodeName(rcode: number): string {
  return ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'][rcode] ?? String(rcode);
}

/** dns.resolvers' forms: `1.2.3.4`, `1.2.3.4:53`, `[::1]:53`, `::1`, `host:53`. */
function parseServer(s: string): Server {
  const text = s.trim();
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) return { host: bracketed[1], port: Number(bracketed[2] ?? 53) };
  if (isIP(text)) return { host: text, port: 53 };
  const m = /^(.+):(\d+)$/.exec(text);
  return m ? { host: m[1], port: Number(m[2]) } : { host: text, port: 53 };
}

async function askAll(servers: Server[], name: string, type: number, timeoutMs: number, tries: number) {
  let last: unknown = new Error('no DNS server to ask');
  for (let i = 0; i < tries; i++)
    for (const server of servers) {
      try {
        return await askUdp(server, name, type, timeoutMs);
      } catch (e) {
        last = e;
      }
    }
  throw last;
}

/**
 * The query: recursion desired, AD set (RFC 6840 §5.7: asks the resolver to tell whether it
 * validated the answer) and an EDNS OPT record with DO (RFC 3225), without which some validating
 * resolvers leave AD clear.
 */
export function tlsaQuery(id: number, name: string, type: number): Buffer {
  const labels = name
    .replace(/\.$/, '')
    .split('.')
    .map((l) => Buffer.from(l, 'ascii'));
  if (labels.some((l) => l.length === 0 || l.length > 63)) throw new Error(`${name} is not a valid DNS name`);
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(0x0120, 2); // RD and AD
  header.writeUInt16BE(1, 4); // one question
  header.writeUInt16BE(1, 10); // the OPT record
  const qname = Buffer.concat([...labels.flatMap((l) => [Buffer.from([l.length]), l]), Buffer.from([0])]);
  const question = Buffer.alloc(4);
  question.writeUInt16BE(type, 0);
  question.writeUInt16BE(1, 2); // IN
  // OPT (RFC 6891 §6.1.2): root owner, TYPE 41, CLASS the payload size, TTL carrying DO, no RDATA
  const opt = Buffer.from([0, 0, 41, PAYLOAD >> 8, PAYLOAD & 0xff, 0, 0, 0x80, 0, 0, 0]);
  return Buffer.concat([header, qname, question, opt]);
}

function readAnswer(message: Buffer, id: number, type: number): Answer | null {
  let packet: dns2.Packet;
  try {
    packet = Packet.parse(message);
  } catch {
    return null;
  }
  const header = packet.header as dns2.Packet.Header & { ad?: number };
  if (header.id !== id || !header.qr) return null;
  return {
    rcode: header.rcode,
    authenticated: header.ad === 1,
    rdata: packet.answers
      .filter((r) => r.type === type && Buffer.isBuffer(r.data))
      .map((r) => r.data as unknown as Buffer),
  };
}

function askUdp(server: Server, name: string, type: number, timeoutMs: number): Promise<Answer> {
  const id = randomInt(0x10000);
  const query = tlsaQuery(id, name, type);
  const socket = createSocket(isIP(server.host) === 6 ? 'udp6' : 'udp4');
  return new Promise<Answer>((resolve, reject) => {
    let settled = false;
    const settle = (then: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.close();
      then();
    };
    const timer = setTimeout(() => settle(() => reject(new Error(`no answer from ${server.host} in time`))), timeoutMs);
    socket.on('error', (e) => settle(() => reject(e)));
    socket.on('message', (message, peer) => {
      if (peer.port !== server.port) return;
      const answer = readAnswer(message, id, type);
      if (!answer) return;
      // a truncated answer (TC, RFC 1035 §4.2.1) is asked again over TCP
      if (message[2] & 0x02) settle(() => void askTcp(server, query, id, type, timeoutMs).then(resolve, reject));
      else settle(() => resolve(answer));
    });
    const done = (e: Error | null) => e && settle(() => reject(e));
    socket.send(query, server.port, server.host, done);
  });
}

function askTcp(server: Server, query: Buffer, id: number, type: number, timeoutMs: number): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const socket = connect({ host: server.host, port: server.port });
    let got = Buffer.alloc(0);
    const done = (err: Error | null, answer?: Answer | null) => {
      socket.destroy();
      if (err || !answer) reject(err ?? new Error(`unreadable answer from ${server.host}`));
      else resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done(new Error(`no answer from ${server.host} in time`)));
    socket.on('error', (e) => done(e));
    socket.on('connect', () => {
      const length = Buffer.alloc(2);
      length.writeUInt16BE(query.length);
      socket.write(Buffer.concat([length, query]));
    });
    socket.on('data', (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      if (got.length >= 2 && got.length >= 2 + got.readUInt16BE(0))
        done(null, readAnswer(got.subarray(2, 2 + got.readUInt16BE(0)), id, type));
    });
  });
}
