import { startDnsWorld, type DnsWorld } from './dns-world.js';
import { startReceiver, type HttpsReceiver } from './https-receiver.js';

export interface HookWorld {
  world: DnsWorld;
  hooks: HttpsReceiver;
  /**
   * The config a test API needs to deliver webhooks to `hooks` (its DNS, private
   * addresses allowed, the receiver's CA), with more `webhooks` keys if given.
   */
  config(webhooks?: Record<string, unknown>): {
    dns: { resolvers: string[] };
    network: { allow_private: true };
    webhooks: Record<string, unknown>;
  };
  stop(): Promise<void>;
}

/** A DNS world in which hooks.test is loopback, and the HTTPS receiver there. */
export async function startHookWorld(): Promise<HookWorld> {
  const world = await startDnsWorld();
  const hooks = await startReceiver();
  world.add('hooks.test', 'A', '127.0.0.1');
  return {
    world,
    hooks,
    config: (webhooks = {}) => ({
      dns: { resolvers: [world.address] },
      network: { allow_private: true },
      webhooks: { ca_file: hooks.caFile, ...webhooks },
    }),
    async stop() {
      await hooks.stop();
      await world.stop();
    },
  };
}
