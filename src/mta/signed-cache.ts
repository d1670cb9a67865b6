const TTL_MS = 10_000;
const BUDGET_BYTES = 64 * 1024 * 1024;

/**
 * Signed messages kept briefly: the queue rows of one email's recipient
 * domains go out close together, and each would otherwise build and sign the
 * same message again. Within a memory budget, oldest dropped first; a build
 * that failed is not kept.
 */
export class SignedCache {
  private readonly made = new Map<string, Promise<Buffer>>();
  private readonly sizes = new Map<string, number>();
  private bytes = 0;

  get(key: string, build: () => Promise<Buffer>): Promise<Buffer> {
    const hit = this.made.get(key);
    if (hit) return hit;
    const made = build();
    this.made.set(key, made);
    made.then(
      (raw) => {
        if (this.made.get(key) !== made) return;
        this.sizes.set(key, raw.length);
        this.bytes += raw.length;
        setTimeout(() => this.forget(key), TTL_MS).unref();
        for (const k of this.sizes.keys()) {
          if (this.bytes <= BUDGET_BYTES) break;
          this.forget(k);
        }
      },
      () => this.made.delete(key),
    );
    return made;
  }

  private forget(key: string): void {
    this.made.delete(key);
    this.bytes -= this.sizes.get(key) ?? 0;
    this.sizes.delete(key);
  }
}
