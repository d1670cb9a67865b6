/**
 * Broadcast mail's share of the worker's room: its attempts may take at most
 * half of it, so that a newsletter to slow or tarpitting servers can never
 * leave a password reset waiting for a free slot (docs/broadcasts.md).
 */
export class BulkShare {
  private running = 0;

  constructor(private readonly concurrency: number) {}

  /** how many more broadcast rows may be claimed now */
  get room(): number {
    return Math.max(0, Math.floor(this.concurrency / 2) - this.running);
  }

  track(attempt: Promise<void>): Promise<void> {
    this.running++;
    return attempt.finally(() => void this.running--);
  }
}
