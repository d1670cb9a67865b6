/**
 * The sleep of a polling loop, cut short by wake(). A wake() that arrives
 * while the loop is busy is kept, and the next sleep returns at once: a
 * loop that misses one would sit out its whole idle time while work waits.
 */
export class Waker {
  private pending = false;
  private resolveSleep: (() => void) | null = null;

  wake(): void {
    const resolve = this.resolveSleep;
    if (resolve) resolve();
    else this.pending = true;
  }

  sleep(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.resolveSleep === done) this.resolveSleep = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.resolveSleep = done;
    });
  }
}
