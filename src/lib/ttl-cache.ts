/** `kept`: the value the last load gave that `keep` accepted, for peek (carried over while a reload runs). */
interface Entry<V> {
  at: number;
  value: Promise<V>;
  kept?: V;
}

/**
 * Values loaded by a promise and kept for `ttlMs`: a burst asks the source
 * once, and callers arriving while it loads share the load. Values that
 * `keep` refuses (a failure, an unknown key) and rejected loads are not
 * kept. At most `max` entries; the oldest goes first.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, Entry<V>>();

  constructor(
    private readonly ttlMs: number,
    private readonly keep: (value: V) => boolean = () => true,
    private readonly now: () => number = Date.now,
    private readonly max = 10_000,
  ) {}

  /** The kept value, or a new load; `fresh` loads anew whatever is kept. */
  get(key: string, load: () => Promise<V>, fresh = false): Promise<V> {
    const hit = this.entries.get(key);
    if (!fresh && hit && this.now() - hit.at < this.ttlMs) return hit.value;
    const entry: Entry<V> = { at: this.now(), value: load(), ...(hit && 'kept' in hit ? { kept: hit.kept } : {}) };
    this.entries.set(key, entry);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
    entry.value.then(
      (v) => (this.keep(v) ? void (entry.kept = v) : this.drop(key, entry)),
      () => this.drop(key, entry),
    );
    return entry.value;
  }

  /**
   * The last kept value of a key, however old, without loading: undefined
   * when none is held (never loaded, refused by `keep`, deleted, evicted).
   * A hint, not an answer: the source may have changed since.
   */
  peek(key: string): V | undefined {
    return this.entries.get(key)?.kept;
  }

  /** Forget one key: the next get loads it (after a local write that changed it). */
  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Every key loads again at its next get; until a load refuses one, peek still answers its last kept value. */
  expireAll(): void {
    for (const entry of this.entries.values()) entry.at = -Infinity;
  }

  private drop(key: string, entry: Entry<V>): void {
    if (this.entries.get(key) === entry) this.entries.delete(key);
  }
}
