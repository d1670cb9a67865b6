interface Entry<T> {
  item: T;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * Collects items while the previous flush runs and hands them over
 * together: many small writes become one transaction. When a batch fails,
 * each item is tried alone, so one bad item cannot take the others down.
 */
export class Batcher<T> {
  private waiting: Array<Entry<T>> = [];
  private running = false;

  constructor(
    private readonly flush: (items: T[]) => Promise<void>,
    private readonly max = 500,
  ) {}

  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.running) {
        this.running = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length) {
      const batch = this.waiting.splice(0, this.max);
      try {
        await this.flush(batch.map((e) => e.item));
        for (const e of batch) e.resolve();
      } catch (err) {
        if (batch.length === 1) {
          batch[0].reject(err);
          continue;
        }
        for (const e of batch) {
          await this.flush([e.item]).then(e.resolve, e.reject);
        }
      }
    }
    this.running = false;
  }
}
