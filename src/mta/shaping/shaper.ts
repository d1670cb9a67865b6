import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../log/logger.js';
import type { Clock } from '../../lib/time.js';
import type { Store } from '../../store/store.js';
import type { GroupCommit } from '../../store/group-commit.js';
import {
  addLaneMinutes,
  saveLanes,
  saveRoutes,
  suspendedLanes,
  type LaneMinute,
  type LaneRow,
} from '../../modules/deliverability/shaping/shaping.repo.js';
import { admit, answered, effectiveRate, newLane, probeLost, suspend, type Admission, type Lane } from './lane.js';
import type { Provider, ProviderTable } from './provider-table.js';
import { SourcePicker, type SourcePick } from './sources.js';
import { WarmupCounts } from './warmup.js';
import type { SourceIpConfig } from '../../config/config.js';
import { shapedMessages } from '../../log/metrics.js';

export interface ShaperOptions {
  table: ProviderTable;
  /** outbound.ips, outbound.bulk_pool and outbound.warmup_schedule */
  sources: { ips: readonly SourceIpConfig[]; bulkPool: string | null; warmupSchedule: readonly number[] };
  clock: Clock;
  logger: Logger;
  store: Store;
  writer: GroupCommit;
  /** how often lanes are written to the store and other nodes' suspensions read */
  syncMs?: number;
}

/** What the replies of one transaction did to its lane: `until` when one of them throttled it. */
export interface Observed {
  throttledUntil: number | null;
}

/**
 * Traffic shaping of the MTA (docs/delivery.md): the lanes, one per (provider, source IP), that
 * each SMTP transaction asks before it starts and tells its replies after. State lives in memory
 * and is written to the store every few seconds (and at once when a lane is suspended), so that
 * a restart, another node and `posthorn mta status` see the suspensions.
 */
export class Shaper {
  private readonly lanes = new Map<string, Lane>();
  /** routes whose provider is stored, and those waiting to be */
  private readonly routes = new Map<string, string>();
  private readonly newRoutes = new Map<string, string>();
  private timer: NodeJS.Timeout | null = null;
  private syncing: Promise<void> | null = null;
  private soon: NodeJS.Timeout | null = null;
  readonly warmup: WarmupCounts;
  private readonly picker: SourcePicker;

  constructor(private readonly o: ShaperOptions) {
    this.warmup = new WarmupCounts(o.sources.warmupSchedule);
    this.picker = new SourcePicker(o.sources.ips, o.sources.bulkPool, this.warmup, (p, ip) => this.lane(p, ip));
  }

  /** Whether outbound.ips names source addresses (else the system picks one and pools do not apply). */
  get hasSources(): boolean {
    return this.o.sources.ips.length > 0;
  }

  /** The source IP of an attempt of `n` messages to a provider, from the project's pool (or the bulk pool). */
  source(projectPool: string | null, bulk: boolean, provider: Provider, n: number): SourcePick {
    return this.picker.pick(this.picker.pool(projectPool, bulk), provider, n, this.o.clock.now());
  }

  get table(): ProviderTable {
    return this.o.table;
  }

  async start(): Promise<void> {
    await this.warmup.load(this.o.store.reader, this.o.clock.now());
    await this.adopt();
    this.timer = setInterval(() => void this.sync(), this.o.syncMs ?? 5000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.soon) clearTimeout(this.soon);
    await this.sync();
  }

  /** The lane of a provider from a source IP ('' when the system picks it). */
  lane(provider: Provider, sourceIp: string): Lane {
    const key = `${provider.name}|${sourceIp}`;
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = newLane(provider, sourceIp, this.o.clock.now());
      this.lanes.set(key, lane);
    }
    return lane;
  }

  /** Remembers which provider a recipient domain's mail goes to, for the queued counts of the status. */
  noteRoute(route: string, provider: string): void {
    if (!route || this.routes.get(route) === provider) return;
    this.routes.set(route, provider);
    this.newRoutes.set(route, provider);
  }

  /** Whether a message (`key`, the same when it comes back) may go; a short wait for its turn is waited here. */
  async admit(lane: Lane, key: string, bulk = false): Promise<Admission> {
    const a = admit(lane, key, this.o.clock.now(), bulk);
    if (a.kind === 'go' && a.waitMs > 0) await sleep(a.waitMs);
    return a;
  }

  /** The replies of one transaction on a lane. */
  observe(lane: Lane, results: ReadonlyArray<{ kind: string; reply: string }>, probe: boolean): Observed {
    const now = this.o.clock.now();
    let throttledUntil: number | null = null;
    for (const r of results) {
      const throttle = r.kind === 'delivered' ? null : this.o.table.throttleOf(lane.provider, r.reply);
      if (throttle) {
        suspend(lane, r.reply, throttle.suspendForMs, now);
        lane.counts.throttled++;
        shapedMessages.inc({ provider: lane.known ? lane.provider : 'other', outcome: 'throttled' });
        throttledUntil = lane.until;
        this.o.logger.warn(
          {
            provider: lane.provider,
            sourceIp: lane.sourceIp || null,
            until: new Date(lane.until!),
            rule: throttle.label,
          },
          'provider throttled this sender: suspended',
        );
        this.syncSoon();
        continue;
      }
      const outcome = r.kind === 'delivered' ? 'delivered' : r.kind === 'bounced' ? 'bounced' : 'deferred';
      lane.counts[outcome]++;
      shapedMessages.inc({ provider: lane.known ? lane.provider : 'other', outcome });
      // no reply at all (a failed connection) says nothing of whether the provider takes mail again
      if (r.kind === 'deferred' && r.reply.startsWith('421 4.4.2 ')) probeLost(lane);
      else answered(lane, r.kind === 'delivered', probe);
    }
    if (probe && !results.length) probeLost(lane);
    return { throttledUntil };
  }

  /** Lanes as the status shows them. */
  snapshot(): Lane[] {
    return [...this.lanes.values()];
  }

  private syncSoon(): void {
    if (this.soon) return;
    this.soon = setTimeout(() => {
      this.soon = null;
      void this.sync();
    }, 50);
    this.soon.unref();
  }

  /** Writes what changed and takes on suspensions other nodes (or this one before a restart) stored. */
  private sync(): Promise<void> {
    this.syncing ??= (async () => {
      try {
        // others' suspensions first: a lane written as open must not hide one stored meanwhile
        await this.adopt();
        await this.flush();
      } catch (e) {
        this.o.logger.warn({ err: e }, 'could not store the traffic-shaping state; trying again shortly');
      } finally {
        this.syncing = null;
      }
    })();
    return this.syncing;
  }

  private async flush(): Promise<void> {
    const now = this.o.clock.now();
    const minute = Math.floor(now / 60_000);
    const lanes: LaneRow[] = [];
    const minutes: LaneMinute[] = [];
    for (const l of this.lanes.values()) {
      const c = l.counts;
      if (c.delivered + c.deferred + c.bounced + c.throttled > 0) {
        minutes.push({ provider: l.provider, sourceIp: l.sourceIp, minute, ...c });
        l.counts = { delivered: 0, deferred: 0, bounced: 0, throttled: 0 };
        l.dirty = true;
      }
      if (!l.dirty) continue;
      l.dirty = false;
      lanes.push({
        provider: l.provider,
        sourceIp: l.sourceIp,
        known: l.known,
        state: l.state,
        untilAt: l.until,
        reason: l.reason,
        ratePerMinute: effectiveRate(l),
        updatedAt: now,
      });
    }
    const routes = [...this.newRoutes].map(([route, provider]) => ({ route, provider }));
    this.newRoutes.clear();
    if (!lanes.length && !minutes.length && !routes.length && !this.warmup.pending) return;
    await this.o.writer.run(async (trx) => {
      await saveLanes(trx, lanes, now);
      await addLaneMinutes(trx, minutes);
      await saveRoutes(trx, routes, now);
      await this.warmup.flush(trx);
    });
  }

  /** A suspension stored by another node (or before a restart) holds this node's lane too. */
  private async adopt(): Promise<void> {
    const now = this.o.clock.now();
    for (const row of await suspendedLanes(this.o.store.reader, now)) {
      const lane = this.lanes.get(`${row.provider}|${row.sourceIp}`);
      const target =
        lane ??
        this.lane(
          { name: row.provider, limits: this.o.table.limitsOf(row.provider), warmup: false, known: row.known },
          row.sourceIp,
        );
      if (target.state === 'suspended' && (target.until ?? 0) >= row.untilAt!) continue;
      suspend(target, row.reason ?? 'a throttling reply', row.untilAt! - now, now);
      if (row.ratePerMinute !== null) target.rate = row.ratePerMinute;
      target.dirty = false;
    }
  }
}
