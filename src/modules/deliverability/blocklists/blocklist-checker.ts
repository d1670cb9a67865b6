import { setTimeout as sleep } from 'node:timers/promises';
import { DnsLookupError, describeDnsCode, type ARecords, type DnsblLookup } from '../../../dns/dnsbl-lookup.js';
import { systemClock, type Clock } from '../../../lib/time.js';
import {
  normalizeTarget,
  queryName,
  targetKind,
  type Blocklist,
  type BlocklistKind,
  type ListingState,
} from './dnsbl.js';
import { CACHE_SECONDS, cacheSeconds, judgeAnswer } from './dnsbl-answers.js';

export interface BlocklistResult {
  target: string;
  kind: BlocklistKind;
  zone: string;
  state: ListingState;
  /** the A records the list answered, sorted; [] for clear and for a list that could not be asked */
  codes: string[];
  reason?: string;
  /** when the list was asked (the clock's ms): an answer from the cache keeps the time it was asked */
  checkedAt: number;
  /** how long the answer stands from checkedAt, also how long it is kept (see cacheSeconds) */
  ttlSeconds: number;
}

export interface BlocklistCheckerOptions {
  lookup: DnsblLookup;
  /** for the cache's ages only; pacing follows the real time of the wire */
  clock?: Clock;
  /** queries in flight at most (default 4) */
  concurrency?: number;
  /** queries started per second at most (default 20) */
  perSecond?: number;
  /** ask the TXT record of a listing for its reason (default true) */
  reasons?: boolean;
  /** answers kept at most; the oldest go first (default 100 000) */
  maxEntries?: number;
}

type Answer = Omit<BlocklistResult, 'target' | 'kind' | 'zone'>;

interface Pair {
  target: string;
  list: Blocklist;
  /** null when there is nothing to ask: `unaskable` says why */
  name: string | null;
  unaskable?: string;
}

/**
 * At most `concurrency` lookups in flight, and their starts at least
 * 1/perSecond apart: lists count queries per resolver and refuse those that
 * burst (Spamhaus 127.255.255.255), so the pace is smooth rather than a burst
 * per second.
 */
class Gate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  private turn: Promise<void> = Promise.resolve();
  private lastStart = -Infinity;
  private readonly gapMs: number;

  constructor(
    private readonly concurrency: number,
    perSecond: number,
  ) {
    this.gapMs = 1000 / perSecond;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      await this.paced();
      return await fn();
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (this.active < this.concurrency) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** the slot passes straight to the next in line, so `active` never undercounts */
  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }

  private paced(): Promise<void> {
    const mine = this.turn.then(async () => {
      // a timer may fire a little early: measure again instead of trusting one sleep
      for (
        let wait = this.lastStart + this.gapMs - performance.now();
        wait > 0;
        wait = this.lastStart + this.gapMs - performance.now()
      ) {
        await sleep(Math.ceil(wait));
      }
      this.lastStart = performance.now();
    });
    this.turn = mine;
    return mine;
  }
}

/** Every (target, list) pair of matching kinds, each target once; a target that is neither an IP nor a domain is an error on every list. */
function plan(targets: readonly string[], lists: readonly Blocklist[]): Pair[] {
  const pairs: Pair[] = [];
  for (const target of new Set(targets.map(normalizeTarget))) {
    const kind = targetKind(target);
    for (const list of lists) {
      if (kind && kind !== list.kind) continue;
      const name = kind ? queryName(target, list) : null;
      if (name) pairs.push({ target, list, name });
      else
        pairs.push({
          target,
          list,
          name,
          unaskable: kind
            ? 'the name to ask would be longer than 253 characters'
            : 'neither an IP address nor a domain name',
        });
    }
  }
  return pairs;
}

/**
 * Asks DNS blocklists about IPs and domains: each pair through the lookup,
 * paced (see Gate), each answer kept for as long as cacheSeconds says, a
 * question already on its way shared by whoever asks it meanwhile. One list
 * failing is an `error` result for that list; the others are still asked.
 */
export class BlocklistChecker {
  private readonly cache = new Map<string, { expiresAt: number; answer: Answer }>();
  private readonly pending = new Map<string, Promise<Answer>>();
  private readonly gate: Gate;
  private readonly lookup: DnsblLookup;
  private readonly clock: Clock;
  private readonly reasons: boolean;
  private readonly maxEntries: number;

  constructor(opts: BlocklistCheckerOptions) {
    const concurrency = opts.concurrency ?? 4;
    const perSecond = opts.perSecond ?? 20;
    if (!(concurrency >= 1) || !(perSecond > 0))
      throw new RangeError('concurrency must be 1 or more and perSecond above 0');
    this.gate = new Gate(Math.floor(concurrency), perSecond);
    this.lookup = opts.lookup;
    this.clock = opts.clock ?? systemClock;
    this.reasons = opts.reasons ?? true;
    this.maxEntries = opts.maxEntries ?? 100_000;
  }

  /** One result per (target, list) of the same kind, in the order of targets, then lists. */
  async check(targets: readonly string[], lists: readonly Blocklist[]): Promise<BlocklistResult[]> {
    const pairs = plan(targets, lists);
    const answers = await Promise.all(
      pairs.map((p) => (p.name ? this.answer(p.list, p.name) : this.unaskable(p.unaskable!))),
    );
    return pairs.map((p, i) => ({ target: p.target, kind: p.list.kind, zone: p.list.zone, ...answers[i] }));
  }

  /** Drop every kept answer: the next check asks again (after dns.resolvers changed, say). */
  forget(): void {
    this.cache.clear();
  }

  private unaskable(reason: string): Promise<Answer> {
    return Promise.resolve({
      state: 'error',
      codes: [],
      reason,
      checkedAt: this.clock.now(),
      ttlSeconds: CACHE_SECONDS.error,
    });
  }

  private answer(list: Blocklist, name: string): Promise<Answer> {
    const kept = this.cache.get(name);
    if (kept && this.clock.now() < kept.expiresAt) return Promise.resolve(kept.answer);
    const onItsWay = this.pending.get(name);
    if (onItsWay) return onItsWay;
    const asked = this.ask(list, name).then((answer) => {
      this.keep(name, answer);
      return answer;
    });
    this.pending.set(name, asked);
    const settled = () => void this.pending.delete(name);
    asked.then(settled, settled);
    return asked;
  }

  private keep(name: string, answer: Answer): void {
    this.cache.delete(name);
    this.cache.set(name, { expiresAt: answer.checkedAt + answer.ttlSeconds * 1000, answer });
    if (this.cache.size > this.maxEntries) this.cache.delete(this.cache.keys().next().value as string);
  }

  private async ask(list: Blocklist, name: string): Promise<Answer> {
    const checkedAt = this.clock.now();
    let records: ARecords | 'nxdomain';
    try {
      records = await this.gate.run(() => this.lookup.lookupA(name));
    } catch (e) {
      const reason =
        e instanceof DnsLookupError
          ? `${describeDnsCode(e.code)} (${e.code}) for ${name}`
          : `the lookup of ${name} failed: ${String(e)}`;
      return { state: 'error', codes: [], reason, checkedAt, ttlSeconds: CACHE_SECONDS.error };
    }
    if (records === 'nxdomain') return { state: 'clear', codes: [], checkedAt, ttlSeconds: CACHE_SECONDS.nxdomain };
    let verdict = judgeAnswer(list, records.addresses);
    if (verdict.state === 'listed' && this.reasons) {
      // the reason is a courtesy: a TXT that fails leaves the listing as it is
      const txt = await this.gate.run(() => this.lookup.lookupTxt(name)).catch(() => []);
      verdict = judgeAnswer(list, records.addresses, txt);
    }
    return { ...verdict, checkedAt, ttlSeconds: cacheSeconds(verdict.state, 'records', records.ttlSeconds) };
  }
}
