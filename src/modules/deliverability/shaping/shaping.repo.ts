import type { Db } from '../../../store/db.js';

// The MTA's traffic-shaping state as stored (migration 0031): each (provider, source IP)'s
// state, outcomes per minute, which provider each recipient domain's MX hosts belong to, and
// the warm-up counts of source IPs. The MTA writes it every few seconds; `posthorn mta status`,
// /metrics and the dashboard read it.

export interface LaneRow {
  provider: string;
  sourceIp: string;
  known: boolean;
  state: 'open' | 'suspended' | 'probing';
  untilAt: number | null;
  reason: string | null;
  ratePerMinute: number | null;
  updatedAt: number;
}

export interface LaneMinute {
  provider: string;
  sourceIp: string;
  /** minutes since the epoch */
  minute: number;
  delivered: number;
  deferred: number;
  bounced: number;
  throttled: number;
}

const COUNTS = ['delivered', 'deferred', 'bounced', 'throttled'] as const;

/**
 * Writes lanes as a node sees them. A suspension stored by another node and still in force is
 * not overwritten by a node that has not taken it on yet (it reads stored suspensions after), nor
 * shortened: only a later suspension replaces it.
 */
export async function saveLanes(db: Db, lanes: LaneRow[], now = Date.now()): Promise<void> {
  if (!lanes.length) return;
  await db('mta_lanes')
    .insert(
      lanes.map((l) => ({
        provider: l.provider,
        source_ip: l.sourceIp,
        known: l.known,
        state: l.state,
        until_at: l.untilAt,
        reason: l.reason,
        rate_per_minute: l.ratePerMinute,
        updated_at: l.updatedAt,
      })),
    )
    .onConflict(['provider', 'source_ip'])
    .merge(['state', 'until_at', 'reason', 'rate_per_minute', 'updated_at'])
    .where(
      db.raw(
        `not (mta_lanes.state = 'suspended' and mta_lanes.until_at > ? and (excluded.state <> 'suspended' or excluded.until_at < mta_lanes.until_at))`,
        [now],
      ),
    );
}

export async function addLaneMinutes(db: Db, minutes: LaneMinute[]): Promise<void> {
  for (const m of minutes)
    await db('mta_lane_minutes')
      .insert({
        provider: m.provider,
        source_ip: m.sourceIp,
        minute: m.minute,
        delivered: m.delivered,
        deferred: m.deferred,
        bounced: m.bounced,
        throttled: m.throttled,
      })
      .onConflict(['provider', 'source_ip', 'minute'])
      .merge(Object.fromEntries(COUNTS.map((c) => [c, db.raw(`mta_lane_minutes.${c} + ?`, [m[c]])])));
}

export async function saveRoutes(
  db: Db,
  routes: Array<{ route: string; provider: string }>,
  now: number,
): Promise<void> {
  if (!routes.length) return;
  await db('mta_routes')
    .insert(routes.map((r) => ({ route: r.route, provider: r.provider, updated_at: now })))
    .onConflict('route')
    .merge(['provider', 'updated_at']);
}

/** Lanes suspended until after `now`, by any node: each node honours them. */
export async function suspendedLanes(db: Db, now: number): Promise<LaneRow[]> {
  const rows = (await db('mta_lanes')
    .select('*')
    .where('state', 'suspended')
    .andWhere('until_at', '>', now)) as StoredLane[];
  return rows.map(laneOf);
}

/** Lanes with news since `since`, for the status. */
export async function recentLanes(db: Db, since: number): Promise<LaneRow[]> {
  const rows = (await db('mta_lanes')
    .select('*')
    .where('updated_at', '>=', since)
    .orWhere('until_at', '>', since)
    .orderBy(['provider', 'source_ip'])) as StoredLane[];
  return rows.map(laneOf);
}

/** Outcome counts per lane since `sinceMinute`. */
export async function laneCounts(db: Db, sinceMinute: number): Promise<Map<string, Omit<LaneMinute, 'minute'>>> {
  const rows = await db('mta_lane_minutes')
    .select('provider', 'source_ip')
    .sum({ delivered: 'delivered', deferred: 'deferred', bounced: 'bounced', throttled: 'throttled' })
    .where('minute', '>=', sinceMinute)
    .groupBy<Array<Record<string, string | number | null>>>('provider', 'source_ip');
  const out = new Map<string, Omit<LaneMinute, 'minute'>>();
  for (const r of rows) {
    const lane = { provider: String(r.provider), sourceIp: String(r.source_ip) };
    out.set(`${lane.provider}|${lane.sourceIp}`, {
      ...lane,
      delivered: Number(r.delivered ?? 0),
      deferred: Number(r.deferred ?? 0),
      bounced: Number(r.bounced ?? 0),
      throttled: Number(r.throttled ?? 0),
    });
  }
  return out;
}

/** Queue rows waiting (of one project, or all), per provider of their route (routes the MTA has not looked up yet are not counted). */
export async function queuedByProvider(db: Db, projectId?: string): Promise<Map<string, number>> {
  const q = db('outbound_queue as q')
    .join('mta_routes as r', 'r.route', 'q.route')
    .select('r.provider')
    .count({ n: '*' })
    .where('q.state', 'queued');
  if (projectId) void q.andWhere('q.project_id', projectId);
  const rows = await q.groupBy<Array<{ provider: string; n: string | number }>>('r.provider');
  return new Map(rows.map((r) => [r.provider, Number(r.n)]));
}

/** Forgets minutes before `beforeMinute`, warm-up days before `beforeDay`, and lanes and routes not touched since `before`. */
export async function pruneShaping(db: Db, beforeMinute: number, beforeDay: number, before: number): Promise<number> {
  const minutes = await db('mta_lane_minutes').where('minute', '<', beforeMinute).delete();
  const days = await db('mta_ip_days').where('day', '<', beforeDay).delete();
  const lanes = await db('mta_lanes')
    .where('updated_at', '<', before)
    .andWhere((q) => void q.whereNull('until_at').orWhere('until_at', '<', before))
    .delete();
  const routes = await db('mta_routes').where('updated_at', '<', before).delete();
  return minutes + days + lanes + routes;
}

interface StoredLane {
  provider: string;
  source_ip: string;
  known: boolean | number;
  state: LaneRow['state'];
  until_at: string | number | null;
  reason: string | null;
  rate_per_minute: number | null;
  updated_at: string | number;
}

function laneOf(r: StoredLane): LaneRow {
  return {
    provider: r.provider,
    sourceIp: r.source_ip,
    known: Boolean(r.known),
    state: r.state,
    untilAt: r.until_at === null ? null : Number(r.until_at),
    reason: r.reason,
    ratePerMinute: r.rate_per_minute === null ? null : Number(r.rate_per_minute),
    updatedAt: Number(r.updated_at),
  };
}

/** When each source IP first sent (its warm-up day 1 is that UTC day). */
export async function ipFirstUse(db: Db): Promise<Map<string, number>> {
  const rows = await db('mta_ips').select<Array<{ address: string; first_used_at: string | number }>>(
    'address',
    'first_used_at',
  );
  return new Map(rows.map((r) => [r.address, Number(r.first_used_at)]));
}

export async function saveIpFirstUse(db: Db, ips: Array<{ address: string; firstUsedAt: number }>): Promise<void> {
  if (!ips.length) return;
  await db('mta_ips')
    .insert(ips.map((ip) => ({ address: ip.address, first_used_at: ip.firstUsedAt })))
    .onConflict('address')
    .ignore();
}

export interface IpDay {
  sourceIp: string;
  provider: string;
  /** days since the epoch (UTC) */
  day: number;
  sent: number;
}

/** Messages each source IP sent to each provider on `day`. */
export async function ipDays(db: Db, day: number): Promise<IpDay[]> {
  const rows = (await db('mta_ip_days').select('source_ip', 'provider', 'day', 'sent').where('day', day)) as Array<{
    source_ip: string;
    provider: string;
    day: number | string;
    sent: number | string;
  }>;
  return rows.map((r) => ({ sourceIp: r.source_ip, provider: r.provider, day: Number(r.day), sent: Number(r.sent) }));
}

export async function addIpDays(db: Db, days: IpDay[]): Promise<void> {
  for (const d of days)
    await db('mta_ip_days')
      .insert({ source_ip: d.sourceIp, provider: d.provider, day: d.day, sent: d.sent })
      .onConflict(['source_ip', 'provider', 'day'])
      .merge({ sent: db.raw('mta_ip_days.sent + ?', [d.sent]) });
}
