import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server, type Socket } from 'node:net';
import dns2 from 'dns2';
import { dnsPacketsDropped } from '../log/metrics.js';
import { checkQuery, type DropReason } from './packet-check.js';
import { serveTcpConnection } from './tcp-connection.js';

const { Packet } = dns2;
export type DnsPacket = dns2.Packet;

/** Answers one query by calling `send` once with the response. */
export type DnsHandler = (request: DnsPacket, send: (response: DnsPacket) => void) => void;

export interface DnsListener {
  port: number;
  close(): Promise<void>;
}

export interface DnsListenOptions {
  /** a TCP connection is closed after this long without a whole query or an answer (RFC 7766 §6.2.3 suggests seconds) */
  tcpIdleMs?: number;
  /** TCP connections open at once; more are refused */
  maxTcpConnections?: number;
}

export const DEFAULT_TCP_IDLE_MS = 10_000;
export const DEFAULT_MAX_TCP_CONNECTIONS = 64;
const TCP_MAX_IN_FLIGHT = 16;
/** RFC 1035 §4.2.2: a TCP message's length is 16 bits */
const TCP_MAX_MESSAGE = 0xffff;
/** RFC 1035 §4.2.1: without EDNS a UDP answer is at most 512 bytes */
const UDP_PLAIN_PAYLOAD = 512;
/**
 * The most we answer over UDP whatever the requestor's OPT offers: 1232
 * bytes never fragments on the internet's paths (the 2020 DNS flag day), and
 * fragments are what off-path cache poisoning forges. A longer answer is cut
 * with TC set, and the resolver asks again over TCP.
 */
const UDP_MAX_PAYLOAD = 1232;
// dns2's typings leave out the RCODE table its Packet carries.
const SERVFAIL = (Packet as unknown as { RCODE: { SERVFAIL: number } }).RCODE.SERVFAIL;

type Dropped = DropReason | 'tcp_connections';
const drop = (reason: Dropped) => dnsPacketsDropped.inc({ reason });

/**
 * A DNS server on UDP and TCP at the same port, serving `handle` with the
 * queries that pass packet-check.ts; everything else is dropped unread and
 * counted (posthorn_dns_packets_dropped_total). On UDP a dropped message gets
 * no answer: its source address may be forged, and any answer would be sent
 * to a victim. Port 0 takes the port the OS gives UDP and retries while TCP
 * finds it taken. A bind error rejects.
 *
 * Our own sockets rather than dns2's servers: those parse every message
 * whole before any check could run (13 bytes claiming 65,535 records per
 * section held the thread for seconds); dns2's Packet still reads the
 * question and writes the answers.
 */
export async function listenDns(
  handle: DnsHandler,
  host: string,
  port: number,
  options: DnsListenOptions = {},
): Promise<DnsListener> {
  for (let attempt = 0; ; attempt++) {
    const udp = createSocket(host.includes(':') ? 'udp6' : 'udp4');
    const tcp = createServer({ allowHalfOpen: true });
    try {
      const p = await bindUdp(udp, host, port);
      await listenTcp(tcp, host, p);
      return serve(handle, udp, tcp, p, options);
    } catch (e) {
      closeQuietly(udp, tcp);
      if (port || attempt >= 20 || (e as { code?: string }).code !== 'EADDRINUSE') throw e;
    }
  }
}

function serve(handle: DnsHandler, udp: UdpSocket, tcp: Server, port: number, options: DnsListenOptions): DnsListener {
  let closing: Promise<void> | null = null;
  const answer = (request: DnsPacket, send: (response: DnsPacket) => void) => {
    try {
      handle(request, send);
    } catch {
      send(servfail(request));
    }
  };

  udp.on('message', (message: Buffer, peer: RemoteInfo) => {
    const query = readQuery(message);
    if (typeof query === 'string') return drop(query);
    const limit = Math.min(Math.max(query.ednsPayloadSize ?? UDP_PLAIN_PAYLOAD, UDP_PLAIN_PAYLOAD), UDP_MAX_PAYLOAD);
    answer(query.request, (response) => {
      const bytes = encode(response, query.request, limit);
      if (!bytes || closing) return;
      try {
        udp.send(bytes, peer.port, peer.address, () => undefined);
      } catch {
        // a source port Node will not send to (0): a forged packet, left unanswered
      }
    });
  });
  udp.on('error', () => undefined);

  const sockets = new Set<Socket>();
  tcp.maxConnections = options.maxTcpConnections ?? DEFAULT_MAX_TCP_CONNECTIONS;
  tcp.on('drop', () => drop('tcp_connections'));
  tcp.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const message = (bytes: Buffer, reply: (answer: Buffer) => void) => {
      const query = readQuery(bytes);
      if (typeof query === 'string') {
        drop(query);
        return false;
      }
      answer(query.request, (response) => {
        const encoded = encode(response, query.request, TCP_MAX_MESSAGE);
        if (encoded) reply(encoded);
      });
      return true;
    };
    serveTcpConnection(
      socket,
      { message, oversize: () => drop('oversize') },
      { idleMs: options.tcpIdleMs ?? DEFAULT_TCP_IDLE_MS, maxInFlight: TCP_MAX_IN_FLIGHT },
    );
  });
  tcp.on('error', () => undefined);

  const close = async () => {
    for (const s of sockets) s.destroy();
    await Promise.all([new Promise<void>((r) => udp.close(() => r())), new Promise<void>((r) => tcp.close(() => r()))]);
  };
  return { port, close: () => (closing ??= close().catch(() => undefined)) };
}

/**
 * The query in a message, parsed by dns2 from its header and question alone
 * (the additional section's count set to 0: the OPT record was read by
 * checkQuery, and a query carries nothing else we use), or why it was dropped.
 */
function readQuery(message: Buffer): { request: DnsPacket; ednsPayloadSize: number | null } | Dropped {
  const checked = checkQuery(message);
  if (checked.drop) return checked.drop;
  const head = Buffer.from(message.subarray(0, checked.questionEnd));
  head.writeUInt16BE(0, 10);
  try {
    const request = Packet.parse(head);
    return request.questions.length === 1 ? { request, ednsPayloadSize: checked.ednsPayloadSize } : 'malformed';
  } catch {
    return 'malformed';
  }
}

/**
 * A response's bytes, at most `limit` of them: one that does not fit keeps
 * its question only, with TC set (RFC 1035 §4.2.1, RFC 2181 §9). A response
 * dns2 cannot write becomes SERVFAIL.
 */
function encode(response: DnsPacket, request: DnsPacket, limit: number): Buffer | null {
  try {
    const bytes = response.toBuffer();
    if (bytes.length <= limit) return bytes;
    const cut = new Packet();
    cut.header = new Packet.Header({ ...response.header, tc: 1 });
    cut.questions = response.questions.slice();
    return cut.toBuffer();
  } catch {
    return response.header.rcode === SERVFAIL ? null : encode(servfail(request), request, limit);
  }
}

function servfail(request: DnsPacket): DnsPacket {
  const response = Packet.createResponseFromRequest(request);
  response.header.rcode = SERVFAIL;
  return response;
}

function bindUdp(udp: UdpSocket, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    udp.once('error', reject);
    udp.bind(port, host, () => {
      udp.off('error', reject);
      resolve(udp.address().port);
    });
  });
}

function listenTcp(tcp: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    tcp.once('error', reject);
    tcp.listen(port, host, () => {
      tcp.off('error', reject);
      resolve();
    });
  });
}

/** Closes what did bind after a failed listen; a socket that never bound may refuse, and nothing is left open then. */
function closeQuietly(udp: UdpSocket, tcp: Server): void {
  try {
    udp.close();
  } catch {
    // never bound
  }
  tcp.close(() => undefined);
}
