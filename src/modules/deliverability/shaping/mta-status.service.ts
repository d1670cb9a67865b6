import type { Store } from '../../../store/store.js';
import { ipDays, ipFirstUse, laneCounts, queuedByProvider, recentLanes, suspendedLanes } from './shaping.repo.js';
import { dayOf, poolMembers, warmupCap, warmupDay } from './warmup-schedule.js';
import { queueWaits } from '../../sending/emails/queue-counts.repo.js';

/** One (provider, source IP) as `posthorn mta status` shows it. */
export interface ProviderStatus {
  name: string;
  /** null: the address the system picks */
  source_ip: string | null;
  state: 'open' | 'suspended' | 'probing';
  /** when a suspension ends (RFC 3339), null when not suspended */
  until: string | null;
  /** the reply that suspended it (kept while its rate climbs back) */
  reason: string | null;
  /** messages per minute in force while it climbs back after a suspension; null: the provider's own limit or none */
  rate_per_minute: number | null;
  /** queue rows waiting for the provider (all its source IPs) */
  queued: number;
  last_hour: { delivered: number; deferred: number; bounced: number; throttled: number };
  updated_at: string;
}

/** One source IP of outbound.ips, with its warm-up progress. */
export interface SourceIpStatus {
  address: string;
  ehlo: string;
  pool: string;
  warmup: boolean;
  /** its day of warm-up (1 on the UTC day it first sent); null before it sent or when it does not warm up */
  warmup_day: number | null;
  /** messages it may send to each large provider today; null: no cap (warmed, or past the schedule) */
  daily_cap: number | null;
  /** messages sent today, by provider (counted for warming IPs) */
  sent_today: Record<string, number>;
}

export interface SourceIpsConfig {
  ips: ReadonlyArray<{ address: string; ehlo: string; pool: string; warmup: boolean }>;
  warmupSchedule: readonly number[];
  /** outbound.bulk_pool */
  bulkPool?: string | null;
}

const HOUR = 3_600_000;

/**
 * The MTA's lanes seen in the last 24 hours, as stored by the MTA's traffic shaping every few
 * seconds (docs/delivery.md): what each provider is doing with the mail of each source IP.
 */
export async function mtaStatus(
  store: Store,
  now: number,
  sources: SourceIpsConfig = { ips: [], warmupSchedule: [] },
): Promise<{ providers: ProviderStatus[]; ips: SourceIpStatus[] }> {
  const db = store.reader;
  const [lanes, counts, queued] = await Promise.all([
    recentLanes(db, now - 24 * HOUR),
    laneCounts(db, Math.floor((now - HOUR) / 60_000)),
    queuedByProvider(db),
  ]);
  const providers = lanes.map((l): ProviderStatus => {
    const c = counts.get(`${l.provider}|${l.sourceIp}`);
    // a suspension that has ended is open: the next message is the probe
    const over = l.state === 'suspended' && (l.untilAt ?? 0) <= now;
    return {
      name: l.provider,
      source_ip: l.sourceIp || null,
      state: over ? 'open' : l.state,
      until: l.state === 'suspended' && !over ? new Date(l.untilAt!).toISOString() : null,
      reason: l.reason,
      rate_per_minute: l.ratePerMinute,
      queued: queued.get(l.provider) ?? 0,
      last_hour: {
        delivered: c?.delivered ?? 0,
        deferred: c?.deferred ?? 0,
        bounced: c?.bounced ?? 0,
        throttled: c?.throttled ?? 0,
      },
      updated_at: new Date(l.updatedAt).toISOString(),
    };
  });
  // the ones holding mail back first
  providers.sort((a, b) => Number(b.state === 'suspended') - Number(a.state === 'suspended') || b.queued - a.queued);
  return { providers, ips: await ipStatus(store, now, sources) };
}

/** A provider holding back a project's mail: what the dashboard's emails page says. */
export interface DeliveryHold {
  provider: string;
  source_ip: string | null;
  until: string;
  reason: string | null;
  /** the project's queue rows waiting for the provider */
  queued: number;
}

/** A project's mail the MTA holds back for another reason of its own: a warm-up cap, failing DNS, a TLS policy. */
export interface DeliveryWait {
  kind: 'warmup' | 'dns' | 'tls';
  /** the project's queue rows waiting so */
  queued: number;
  /** the reply of one of them (they may differ in their domain or address) */
  reason: string;
  /** the earliest of their next attempts (RFC 3339) */
  next_attempt_at: string;
}

/** What holds back a project's mail (its own counts only: never another project's), for its dashboard. */
export interface DeliveryState {
  suspended: DeliveryHold[];
  waiting: DeliveryWait[];
  /** the addresses of outbound.ips its mail (and its broadcasts) leaves from, with their warm-up progress */
  sources: SourceIpStatus[];
}

export async function deliveryState(
  store: Store,
  project: { id: string; ipPool: string | null },
  now: number,
  sources: SourceIpsConfig = { ips: [], warmupSchedule: [] },
): Promise<DeliveryState> {
  const pools = new Set(
    [false, true].flatMap((bulk) =>
      poolMembers(sources.ips, project.ipPool, bulk, sources.bulkPool ?? null).map((ip) => ip.address),
    ),
  );
  const [suspended, waits, ips] = await Promise.all([
    deliveryHolds(store, project.id, now),
    queueWaits(store.reader, project.id),
    ipStatus(store, now, { ...sources, ips: sources.ips.filter((ip) => pools.has(ip.address)) }),
  ]);
  const waiting = waits
    .filter((w): w is typeof w & { kind: DeliveryWait['kind'] } => w.kind !== 'throttle')
    .map((w) => ({
      kind: w.kind,
      queued: w.rows,
      reason: w.reason,
      next_attempt_at: new Date(w.nextAt).toISOString(),
    }));
  return { suspended, waiting, sources: ips };
}

/** The suspended lanes that hold back mail of a project (its own queued count only: never another project's). */
async function deliveryHolds(store: Store, projectId: string, now: number): Promise<DeliveryHold[]> {
  const lanes = (await suspendedLanes(store.reader, now)).filter((l) => (l.untilAt ?? 0) > now);
  if (!lanes.length) return [];
  const queued = await queuedByProvider(store.reader, projectId);
  return lanes
    .filter((l) => (queued.get(l.provider) ?? 0) > 0)
    .map((l) => ({
      provider: l.provider,
      source_ip: l.sourceIp || null,
      until: new Date(l.untilAt!).toISOString(),
      reason: l.reason,
      queued: queued.get(l.provider) ?? 0,
    }));
}

async function ipStatus(store: Store, now: number, sources: SourceIpsConfig): Promise<SourceIpStatus[]> {
  if (!sources.ips.length) return [];
  const [first, days] = await Promise.all([ipFirstUse(store.reader), ipDays(store.reader, dayOf(now))]);
  return sources.ips.map((ip) => {
    const since = first.get(ip.address);
    const cap = ip.warmup && since !== undefined ? warmupCap(sources.warmupSchedule, since, now) : Infinity;
    const sent: Record<string, number> = {};
    for (const d of days) if (d.sourceIp === ip.address) sent[d.provider] = d.sent;
    return {
      address: ip.address,
      ehlo: ip.ehlo,
      pool: ip.pool,
      warmup: ip.warmup,
      warmup_day: ip.warmup && since !== undefined ? warmupDay(since, now) : null,
      daily_cap: ip.warmup
        ? since === undefined
          ? (sources.warmupSchedule[0] ?? null)
          : Number.isFinite(cap)
            ? cap
            : null
        : null,
      sent_today: sent,
    };
  });
}
