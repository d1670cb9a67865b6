import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens at host:port (0: a free one); resolves with the port taken, rejects if it cannot be (EADDRINUSE). */
export async function listenHttp(server: Server, listen: { host: string; port: number }): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}
