// One lane of outbound traffic: a provider seen from one source IP address
// (KumoMTA's "egress path"). Pure decisions over its state, the clock passed
// in: whether a message may go now, wait a moment, or wait in the queue; and
// what a reply does to the lane (suspend it, or let its rate climb back).

export interface LaneLimits {
  maxConnections: number;
  /** null: no cap */
  maxMessagesPerConnection: number | null;
  /** null: no rate limit */
  maxMessagesPerMinute: number | null;
}

export type LaneStateName = 'open' | 'suspended' | 'probing';

export interface Lane {
  provider: string;
  /** '' when the system picks the source address */
  sourceIp: string;
  /** in the provider table, rather than named after an MX host's domain */
  known: boolean;
  limits: LaneLimits;
  state: LaneStateName;
  /** when a suspension ends */
  until: number | null;
  /** the reply that suspended the lane */
  reason: string | null;
  /** the message sent to see whether the provider takes mail again */
  probeInFlight: boolean;
  /** when it was let go */
  probeAt: number;
  /** messages per minute in force after a throttle (AIMD); null: the limit's, or none */
  rate: number | null;
  /** what the rate climbs back to: the limit, or for a provider without one the pace it was throttled at */
  ceiling: number | null;
  /** generic cell rate algorithm: the theoretical time the next message is due */
  tat: number;
  /** per ten seconds of the last minute: messages started, to know the pace a limitless lane was throttled at */
  paced: number[];
  pacedAt: number;
  /** waits promised to held messages (key → when it may go) so that they keep their turn */
  reservations: Map<string, number>;
  /** when the last hold of a transactional message ends: broadcast mail waits until after it */
  transactionalHeldUntil: number;
  /** counted since the last flush to the store */
  counts: LaneCounts;
  /** changed since the last flush */
  dirty: boolean;
}

export interface LaneCounts {
  delivered: number;
  deferred: number;
  bounced: number;
  throttled: number;
}

/** What a message may do now. */
export type Admission =
  | { kind: 'go'; waitMs: number; probe: boolean }
  /**
   * Wait in the queue until `until`. `quiet`: only its turn has not come (the rate, the probe of
   * another message); otherwise the lane is suspended (or, `warmup`, the pool's addresses sent
   * today's warm-up cap) and the recipient is deferred with `reason`.
   */
  | { kind: 'hold'; until: number; reason: string; quiet: boolean; warmup?: boolean };

/** The longest a message waits in memory for its turn; past it, it waits in the queue (and frees its worker slot). */
export const MAX_WAIT_MS = 2000;
/** How long messages wait while the probe after a suspension has not answered. */
export const PROBE_WAIT_MS = 5_000;
/** A probe not answered in this time is taken as lost, and the next message probes (an SMTP transaction's own timeouts are longer, but end in an answer or an error that says so). */
export const PROBE_LOST_MS = 10 * 60_000;
/** The pace assumed for a provider without a limit that throttled before a minute of history. */
const MIN_CEILING = 60;
const MINUTE = 60_000;

export function newLane(p: { name: string; known: boolean; limits: LaneLimits }, sourceIp: string, now: number): Lane {
  return {
    provider: p.name,
    sourceIp,
    known: p.known,
    limits: p.limits,
    state: 'open',
    until: null,
    reason: null,
    probeInFlight: false,
    probeAt: 0,
    rate: null,
    ceiling: null,
    tat: now,
    paced: [0, 0, 0, 0, 0, 0],
    pacedAt: now,
    reservations: new Map(),
    transactionalHeldUntil: Number.NEGATIVE_INFINITY,
    counts: { delivered: 0, deferred: 0, bounced: 0, throttled: 0 },
    dirty: false,
  };
}

/** Messages per minute in force now; null: no limit. */
export function effectiveRate(lane: Lane): number | null {
  return lane.rate ?? lane.limits.maxMessagesPerMinute;
}

/**
 * Whether a message (`key`: the same for the same message when it comes back) may go now. A
 * suspended lane holds everything until `until`; then one message goes as a probe and the rest
 * wait for its answer; an open lane spaces messages at its rate (GCRA, a second's burst).
 */
export function admit(lane: Lane, key: string, now: number, bulk = false): Admission {
  const a = decide(lane, key, now, bulk);
  // transactional mail first (docs/delivery.md): what the lane holds of it, broadcast mail waits behind
  if (a.kind === 'hold' && !bulk) lane.transactionalHeldUntil = Math.max(lane.transactionalHeldUntil, a.until);
  return a;
}

/**
 * How long broadcast mail waits after the last hold of transactional mail on its lane ends, so that
 * the held transactional mail is admitted first when both come back (a suspension ended, the probe
 * answered, their turn at the rate came).
 */
export const BULK_AFTER_MS = 1000;

function decide(lane: Lane, key: string, now: number, bulk: boolean): Admission {
  const behind = lane.transactionalHeldUntil + BULK_AFTER_MS;
  if (lane.state === 'suspended') {
    if (now < lane.until!)
      return {
        kind: 'hold',
        until: bulk ? Math.max(lane.until!, behind) : lane.until!,
        reason: suspendedReason(lane),
        quiet: false,
      };
    lane.state = 'probing';
    lane.probeInFlight = false;
    lane.dirty = true;
  }
  if (bulk && now < behind)
    return { kind: 'hold', until: behind, reason: 'waiting for transactional mail to go first', quiet: true };
  if (lane.state === 'probing') {
    // a probe whose answer never came back (its attempt ended on an error of our own) is lost
    if (lane.probeInFlight && now - lane.probeAt < PROBE_LOST_MS)
      return { kind: 'hold', until: now + PROBE_WAIT_MS, reason: 'waiting for the probe', quiet: true };
    lane.probeInFlight = true;
    lane.probeAt = now;
    lane.tat = now;
    pace(lane, now);
    return { kind: 'go', waitMs: 0, probe: true };
  }
  const rate = effectiveRate(lane);
  if (rate === null) {
    pace(lane, now);
    return { kind: 'go', waitMs: 0, probe: false };
  }
  const promised = lane.reservations.get(key);
  if (promised !== undefined) {
    // it keeps its turn: back too early (another node's clock, a wake-up), it waits for it again
    if (promised - now > MAX_WAIT_MS)
      return { kind: 'hold', until: promised, reason: rateReason(lane, rate), quiet: true };
    lane.reservations.delete(key);
    pace(lane, now);
    return { kind: 'go', waitMs: Math.max(0, promised - now), probe: false };
  }
  const interval = MINUTE / rate;
  const burst = Math.max(1, Math.ceil(rate / 60));
  const tat = Math.max(lane.tat, now);
  // whole milliseconds: the time becomes a queue row's next_attempt_at (a bigint on PostgreSQL)
  const allowedAt = Math.ceil(tat - interval * (burst - 1));
  lane.tat = tat + interval;
  if (allowedAt - now <= MAX_WAIT_MS) {
    pace(lane, now);
    return { kind: 'go', waitMs: Math.max(0, allowedAt - now), probe: false };
  }
  forgetStale(lane, now);
  lane.reservations.set(key, allowedAt);
  return { kind: 'hold', until: allowedAt, reason: rateReason(lane, rate), quiet: true };
}

const rateReason = (lane: Lane, rate: number) => `waiting for its turn at ${lane.provider}'s rate of ${rate} a minute`;

/**
 * A reply that matched a backoff rule: the lane is suspended for `forMs` (again, if a probe or a
 * message in flight met it), and its rate is halved: multiplicative decrease.
 */
export function suspend(lane: Lane, reply: string, forMs: number, now: number): void {
  const until = now + forMs;
  // more throttles from messages that were in flight: one suspension (the longest), one decrease
  if (lane.state === 'suspended' && lane.until !== null && now < lane.until) {
    if (until > lane.until) {
      lane.until = until;
      lane.dirty = true;
    }
    return;
  }
  const ceiling = lane.ceiling ?? lane.limits.maxMessagesPerMinute ?? Math.max(MIN_CEILING, pacedPerMinute(lane, now));
  const current = effectiveRate(lane) ?? ceiling;
  lane.ceiling = ceiling;
  lane.rate = Math.max(1, Math.floor(Math.min(current, ceiling) / 2));
  lane.state = 'suspended';
  lane.until = until;
  lane.reason = reply;
  lane.probeInFlight = false;
  lane.reservations.clear();
  lane.dirty = true;
}

/**
 * A reply that matched no backoff rule: the server takes mail. The probe's answer opens the lane at
 * half its ceiling; after that each accepted message adds one message a minute (additive increase)
 * until the rate is back at its ceiling, where the lane's own limit (or none) applies again.
 */
export function answered(lane: Lane, accepted: boolean, probe: boolean): void {
  if (lane.state === 'suspended') return;
  if (lane.state === 'probing') {
    if (!probe) return;
    lane.state = 'open';
    lane.until = null;
    lane.probeInFlight = false;
    lane.dirty = true;
    return;
  }
  if (!accepted || lane.rate === null || lane.ceiling === null) return;
  lane.rate += 1;
  if (lane.rate >= lane.ceiling) {
    lane.rate = null;
    lane.ceiling = null;
    lane.reason = null;
  }
  lane.dirty = true;
}

/** Whether a message let go may still start its transaction (it waited for a connection meanwhile). */
export function stillOpen(lane: Lane, probe: boolean): boolean {
  return lane.state === 'open' || (probe && lane.state === 'probing');
}

/** A probe that got no answer at all (the connection failed): the next message probes again. */
export function probeLost(lane: Lane): void {
  if (lane.state === 'probing') lane.probeInFlight = false;
}

function suspendedReason(lane: Lane): string {
  return `${lane.provider} suspended this sender until ${new Date(lane.until!).toISOString()} after: ${lane.reason ?? 'a throttling reply'}`;
}

/** Counts a message started, in ten-second slices of the last minute. */
function pace(lane: Lane, now: number): void {
  rotate(lane, now);
  lane.paced[lane.paced.length - 1]++;
}

function rotate(lane: Lane, now: number): void {
  const slices = Math.min(6, Math.floor((now - lane.pacedAt) / 10_000));
  if (slices <= 0) return;
  lane.paced = [...lane.paced.slice(slices), ...new Array<number>(slices).fill(0)];
  lane.pacedAt += slices * 10_000;
  if (now - lane.pacedAt >= 10_000) lane.pacedAt = now;
}

function pacedPerMinute(lane: Lane, now: number): number {
  rotate(lane, now);
  return lane.paced.reduce((a, b) => a + b, 0);
}

/** Reservations of messages that never came back (deleted, taken by another node) are dropped after a minute. */
function forgetStale(lane: Lane, now: number): void {
  if (lane.reservations.size < 1000) return;
  for (const [k, at] of lane.reservations) if (at < now - MINUTE) lane.reservations.delete(k);
}
