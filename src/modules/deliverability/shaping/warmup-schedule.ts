// The warm-up schedule of a new source IP (outbound.ips[].warmup, outbound.warmup_schedule): how
// many messages it may send to each large provider on each day of its warm-up.

const DAY = 86_400_000;

/** The UTC day a time falls on, as days since the epoch. */
export const dayOf = (t: number): number => Math.floor(t / DAY);

/** The IP's day of warm-up: 1 on the UTC day it first sent. */
export const warmupDay = (firstUsedAt: number, now: number): number => dayOf(now) - dayOf(firstUsedAt) + 1;

/** Messages a warming IP may send to one provider today: the schedule's entry for its day, no cap once it has run out. */
export function warmupCap(schedule: readonly number[], firstUsedAt: number, now: number): number {
  return schedule[warmupDay(firstUsedAt, now) - 1] ?? Infinity;
}

/**
 * The source addresses (outbound.ips) mail of a project leaves from: its pool (broadcasts from
 * outbound.bulk_pool when it is set), else the pool named `default`, else all of them.
 */
export function poolMembers<Ip extends { pool: string }>(
  ips: readonly Ip[],
  projectPool: string | null,
  bulk: boolean,
  bulkPool: string | null,
): Ip[] {
  const name = bulk && bulkPool ? bulkPool : (projectPool ?? 'default');
  const members = ips.filter((ip) => ip.pool === name);
  if (members.length) return members;
  const fallback = ips.filter((ip) => ip.pool === 'default');
  return fallback.length ? fallback : [...ips];
}
