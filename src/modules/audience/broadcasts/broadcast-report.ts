// A broadcast's report (GET /v1/broadcasts/{id}/report): its bounces by reason and its
// outcomes hour by hour. Pure: the counts come from broadcast-report.repo.ts.

import { iso } from '../../../lib/time.js';
import { HOUR_MS, type HourCount } from './broadcast-report.repo.js';

/** Hours between the first and the last filled in with zeros up to this many; a longer report lists only the hours with something. */
export const MAX_FILLED_HOURS = 24 * 31;

const SERIES = {
  'email.sent': 'sent',
  'email.delivered': 'delivered',
  'email.bounced': 'bounced',
  'email.complained': 'complained',
  'email.opened': 'opened',
  'email.clicked': 'clicked',
  'email.unsubscribed': 'unsubscribed',
} as const;
type Series = (typeof SERIES)[keyof typeof SERIES];

export type HourBucket = { hour: string } & Record<Series, number>;

const empty = (hour: number): HourBucket => ({
  hour: iso(hour),
  sent: 0,
  delivered: 0,
  bounced: 0,
  complained: 0,
  opened: 0,
  clicked: 0,
  unsubscribed: 0,
});

/** The counts as hourly buckets, oldest first; the hours between without anything are zeros, so that a chart reads time evenly. */
export function timeline(counts: HourCount[]): HourBucket[] {
  if (!counts.length) return [];
  const hours = counts.map((c) => c.hour);
  const [first, last] = [Math.min(...hours), Math.max(...hours)];
  const filled = (last - first) / HOUR_MS < MAX_FILLED_HOURS;
  const buckets = new Map<number, HourBucket>();
  if (filled) for (let h = first; h <= last; h += HOUR_MS) buckets.set(h, empty(h));
  for (const c of counts) {
    const series = SERIES[c.type as keyof typeof SERIES];
    if (!series) continue;
    const b = buckets.get(c.hour) ?? empty(c.hour);
    b[series] += c.n;
    buckets.set(c.hour, b);
  }
  return [...buckets.entries()].sort(([a], [b]) => a - b).map(([, b]) => b);
}

/** Counts by key, most first (then by name), as `[{key, count}]` reads in a table. */
export function tally<K extends string>(keys: string[], name: K): Array<Record<K, string> & { count: number }> {
  const m = new Map<string, number>();
  for (const k of keys) m.set(k, (m.get(k) ?? 0) + 1);
  return [...m]
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([k, count]) => ({ [name]: k, count }) as Record<K, string> & { count: number });
}
