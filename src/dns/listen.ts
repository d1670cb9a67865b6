import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import dns2 from 'dns2';

export type DnsHandler = Parameters<typeof dns2.createServer>[0]['handle'];

export interface DnsListener {
  port: number;
  close(): Promise<void>;
}

/**
 * A dns2 server on UDP and TCP at the same port. Port 0 picks a port free for
 * UDP and retries while TCP finds it taken, since the OS cannot allocate one
 * port for both protocols at once.
 *
 * dns2's listen() resolves once both sockets listen and never rejects: a bind
 * error arrives only as an 'error' event. Without the race below a port
 * already taken left the promise pending for ever (serve hung at start
 * instead of failing, and the port-0 retry never ran).
 */
export async function listenDns(handle: DnsHandler, host: string, port: number): Promise<DnsListener> {
  for (let attempt = 0; ; attempt++) {
    const p = port || (await freeUdpPort(host));
    const server = dns2.createServer({ udp: true, tcp: true, handle });
    // A malformed query must not take the server down.
    server.on('requestError', () => undefined);
    const bindFailed = new Promise<never>((_, reject) => server.once('error', reject));
    server.on('error', () => undefined);
    try {
      await Promise.race([server.listen({ udp: { port: p, address: host }, tcp: { port: p, address: host } }), bindFailed]);
      return { port: p, close: () => server.close().then(() => undefined, () => undefined) };
    } catch (e) {
      closeQuietly(server);
      if (port || attempt >= 20 || (e as { code?: string }).code !== 'EADDRINUSE') throw e;
    }
  }
}

/**
 * Closes what did bind after a failed listen. Not awaited: dns2's close()
 * waits for both sockets' 'close', and the socket that failed to bind may
 * never emit one.
 */
function closeQuietly(server: ReturnType<typeof dns2.createServer>): void {
  try {
    void server.close().catch(() => undefined);
  } catch {
    // a socket that never bound may refuse to close; nothing is left open
  }
}

function freeUdpPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createSocket(host.includes(':') ? 'udp6' : 'udp4');
    s.once('error', reject);
    s.bind(0, host, () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}
