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
 */
export async function listenDns(handle: DnsHandler, host: string, port: number): Promise<DnsListener> {
  for (let attempt = 0; ; attempt++) {
    const p = port || (await freeUdpPort(host));
    const server = dns2.createServer({ udp: true, tcp: true, handle });
    // A malformed query must not take the server down.
    server.on('requestError', () => undefined);
    server.on('error', () => undefined);
    try {
      await server.listen({ udp: { port: p, address: host }, tcp: { port: p, address: host } });
      return { port: p, close: () => server.close().then(() => undefined, () => undefined) };
    } catch (e) {
      await server.close().catch(() => undefined);
      if (port || attempt >= 20 || (e as { code?: string }).code !== 'EADDRINUSE') throw e;
    }
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
