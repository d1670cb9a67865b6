/**
 * One SQLite write transaction at a time across the threads of a process
 * (the API thread and the background thread each have a writer connection).
 * SQLite would serialise them too, but a writer that finds the database
 * locked sleeps in its busy handler and, on the API thread, stops the event
 * loop meanwhile. Here a waiting thread waits asynchronously
 * (Atomics.waitAsync) and goes on serving until the other commits.
 */
export class WriteLock {
  private readonly cell: Int32Array;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(4)) {
    this.cell = new Int32Array(buffer);
  }

  async acquire(): Promise<void> {
    for (;;) {
      if (Atomics.compareExchange(this.cell, 0, 0, 1) === 0) return;
      const wait = (
        Atomics as unknown as {
          waitAsync(a: Int32Array, i: number, v: number): { async: boolean; value: Promise<string> | string };
        }
      ).waitAsync(this.cell, 0, 1);
      if (wait.async) await wait.value;
    }
  }

  release(): void {
    Atomics.store(this.cell, 0, 0);
    Atomics.notify(this.cell, 0, 1);
  }
}
