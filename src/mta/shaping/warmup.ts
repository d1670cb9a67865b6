import type { Db } from '../../store/db.js';
import {
  addIpDays,
  ipDays,
  ipFirstUse,
  saveIpFirstUse,
  type IpDay,
} from '../../modules/deliverability/shaping/shaping.repo.js';
import { dayOf, warmupCap, warmupDay } from '../../modules/deliverability/shaping/warmup-schedule.js';

export { dayOf };

/**
 * The warm-up counts of the source IPs: messages each sent to each provider today, and when each
 * first sent. Kept in memory, counted as messages are let go, and written to the store with the
 * rest of the shaping state (a restart goes on with the day's counts).
 */
export class WarmupCounts {
  private day = -1;
  private readonly sent = new Map<string, number>();
  private readonly unsaved = new Map<string, number>();
  private readonly firstUse = new Map<string, number>();
  private readonly newFirstUse: Array<{ address: string; firstUsedAt: number }> = [];

  constructor(readonly schedule: readonly number[]) {}

  /** Reads the store's counts of today (at start, and when the day changes). */
  async load(db: Db, now: number): Promise<void> {
    for (const [address, at] of await ipFirstUse(db)) if (!this.firstUse.has(address)) this.firstUse.set(address, at);
    this.day = dayOf(now);
    this.sent.clear();
    for (const d of await ipDays(db, this.day)) this.sent.set(`${d.sourceIp}|${d.provider}`, d.sent);
    for (const [k, n] of this.unsaved) this.sent.set(k, (this.sent.get(k) ?? 0) + n);
  }

  /** When the IP first sent; the first call for an IP that never did makes now its first use. */
  firstUsedAt(address: string, now: number): number {
    let at = this.firstUse.get(address);
    if (at === undefined) {
      at = now;
      this.firstUse.set(address, at);
      this.newFirstUse.push({ address, firstUsedAt: at });
    }
    return at;
  }

  /** How many more messages the IP may send to the provider today (Infinity: no cap left to mind). */
  room(address: string, provider: string, now: number): number {
    this.roll(now);
    const cap = warmupCap(this.schedule, this.firstUsedAt(address, now), now);
    return cap - (this.sent.get(`${address}|${provider}`) ?? 0);
  }

  /** The day's cap for the IP, and what it sent today to each provider: for the status. */
  progress(address: string, now: number): { day: number; cap: number | null; sentToday: Record<string, number> } {
    this.roll(now);
    const first = this.firstUse.get(address);
    const sentToday: Record<string, number> = {};
    for (const [k, n] of this.sent) if (k.startsWith(`${address}|`)) sentToday[k.slice(address.length + 1)] = n;
    if (first === undefined) return { day: 0, cap: this.schedule[0] ?? null, sentToday };
    const cap = warmupCap(this.schedule, first, now);
    return { day: warmupDay(first, now), cap: Number.isFinite(cap) ? cap : null, sentToday };
  }

  count(address: string, provider: string, n: number, now: number): void {
    this.roll(now);
    const k = `${address}|${provider}`;
    this.sent.set(k, (this.sent.get(k) ?? 0) + n);
    this.unsaved.set(k, (this.unsaved.get(k) ?? 0) + n);
  }

  /** counts or first uses not written yet */
  get pending(): boolean {
    return this.unsaved.size > 0 || this.newFirstUse.length > 0;
  }

  async flush(db: Db): Promise<void> {
    const days: IpDay[] = [...this.unsaved].map(([k, sent]) => {
      const [sourceIp, provider] = k.split('|');
      return { sourceIp, provider, day: this.day, sent };
    });
    this.unsaved.clear();
    await saveIpFirstUse(db, this.newFirstUse.splice(0));
    await addIpDays(db, days);
  }

  /** A new UTC day starts every count at zero (what was not written yet belongs to the day before). */
  private roll(now: number): void {
    if (dayOf(now) === this.day) return;
    this.day = dayOf(now);
    this.sent.clear();
    this.unsaved.clear();
  }
}
