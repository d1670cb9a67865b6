import type { SourceIpConfig } from '../../config/config.js';
import type { Lane } from './lane.js';
import type { Provider } from './provider-table.js';
import { dayOf, type WarmupCounts } from './warmup.js';
import { poolMembers } from '../../modules/deliverability/shaping/warmup-schedule.js';

/** The source address a message leaves from, or why it waits. */
export type SourcePick =
  | { kind: 'source'; source: SourceIpConfig | null }
  | { kind: 'hold'; until: number; reason: string; quiet: false; warmup: boolean };

const DAY = 86_400_000;

/**
 * Picks the source IP of each attempt (outbound.ips): from the project's pool (broadcasts from
 * outbound.bulk_pool when it is set), spreading messages over the pool's addresses in turn. An
 * address whose lane to the provider is suspended, or that has sent its warm-up cap to the provider
 * today, is passed over; when every address of the pool is, the message waits (deferred, with the
 * reason) until the first of them opens. Without outbound.ips, the system picks the address.
 */
export class SourcePicker {
  private readonly turn = new Map<string, number>();

  constructor(
    private readonly ips: readonly SourceIpConfig[],
    private readonly bulkPool: string | null,
    private readonly warmup: WarmupCounts,
    private readonly laneOf: (provider: Provider, sourceIp: string) => Lane,
  ) {}

  /** The addresses of a pool: the project's (or broadcasts'), the default pool, else all of them. */
  pool(projectPool: string | null, bulk: boolean): SourceIpConfig[] {
    return poolMembers(this.ips, projectPool, bulk, this.bulkPool);
  }

  /** `n`: the messages the attempt may send (its recipients), counted toward the warm-up cap. */
  pick(pool: SourceIpConfig[], provider: Provider, n: number, now: number): SourcePick {
    if (!pool.length) return { kind: 'source', source: null };
    const key = `${pool.map((ip) => ip.address).join(',')}|${provider.name}`;
    const start = this.turn.get(key) ?? 0;
    let suspended: { until: number; reason: string } | null = null;
    let warming: string | null = null;
    for (let i = 0; i < pool.length; i++) {
      const ip = pool[(start + i) % pool.length];
      const lane = this.laneOf(provider, ip.address);
      if (lane.state === 'suspended' && now < lane.until!) {
        if (!suspended || lane.until! < suspended.until)
          suspended = { until: lane.until!, reason: `${lane.provider} suspended ${ip.address}: ${lane.reason ?? ''}` };
        continue;
      }
      const warms = ip.warmup && provider.warmup;
      if (warms && this.warmup.room(ip.address, provider.name, now) <= 0) {
        const cap = this.warmup.progress(ip.address, now).cap;
        warming ??= `warm-up: ${ip.address} has sent today's ${cap} messages to ${provider.name}`;
        continue;
      }
      this.turn.set(key, (start + i + 1) % pool.length);
      if (warms) this.warmup.count(ip.address, provider.name, n, now);
      return { kind: 'source', source: ip };
    }
    const tomorrow = (dayOf(now) + 1) * DAY;
    if (warming && (!suspended || tomorrow < suspended.until))
      return { kind: 'hold', until: tomorrow, reason: warming, quiet: false, warmup: true };
    return { kind: 'hold', until: suspended!.until, reason: suspended!.reason, quiet: false, warmup: false };
  }
}
