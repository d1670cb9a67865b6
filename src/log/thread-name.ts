import { writeFileSync } from 'node:fs';

/**
 * Names the calling OS thread (Linux: /proc/thread-self/comm, 15 bytes at most), so that `top -H`,
 * `ps -L` and the bench's CPU per thread tell the appliance's threads apart; elsewhere it does nothing.
 * Each thread's entry calls it first; the main thread keeps the process's name.
 */
export function nameThisThread(name: string): void {
  try {
    writeFileSync('/proc/thread-self/comm', name.slice(0, 15));
  } catch {
    // not Linux, or no /proc: the thread keeps its name
  }
}
