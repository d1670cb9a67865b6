/**
 * Values loaded by a promise and kept for `ttlMs`: a burst asks the source
 * once, and callers arriving while it loads share the load. Values that
 * `keep` refuses (a failure, an unknown key) and rejected loads are not
 * kept. At most `max` entries; the oldest goes first.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { at: number; value: Promise<V> }>();

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
    const entry = { at: this.now(), value: load() };
    this.entries.set(key, entry);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
    entry.value.then(
      (v) => this.keep(v) || this.drop(key, entry),
      () => this.drop(key, entry),
    );
    return entry.value;
  }

  /** Forget one key: the next get loads it (after a local write that changed it). */
  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  private drop(key: string, entry: { value: Promise<V> }): void {
    if (this.entries.get(key) === entry) this.entries.delete(key);
  }
}
