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
