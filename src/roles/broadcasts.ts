import type { Logger } from '../log/logger.js';
import { Waker } from '../lib/waker.js';
import type { BroadcastFanOut } from '../modules/broadcasts/fan-out.js';
import type { Role } from './role.js';

export interface FanOutRole extends Role {
  /** a broadcast was sent or scheduled */
  wake(): void;
}

/** How long the loop sleeps with nothing to do, at most: a scheduled broadcast's time is looked at this often too. */
const IDLE_MS = 5_000;

/**
 * The broadcast fan-out (modules/broadcasts/fan-out.ts) in the thread of the
 * accept group commit: one batch of each broadcast in turn, round after
 * round, while any has work; then asleep until woken or the next scheduled
 * one is due. A failing batch is logged and tried again a moment later.
 */
export function startFanOut(fanOut: BroadcastFanOut, logger: Logger, onWake: (wake: () => void) => void): FanOutRole {
  const waker = new Waker();
  onWake(() => waker.wake());
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      let more = false;
      let wait = IDLE_MS;
      try {
        for (const b of await fanOut.due()) {
          if (stopped) break;
          more = (await fanOut.step(b)) || more;
        }
        const pace = fanOut.paceWait();
        const next = await fanOut.nextScheduledAt();
        wait = Math.min(more ? pace : IDLE_MS, next === null ? IDLE_MS : Math.max(0, next - Date.now()));
      } catch (e) {
        logger.error({ err: e }, 'broadcast fan-out batch failed; trying again');
        wait = 1_000;
      }
      if (!more || wait > 0) await waker.sleep(Math.max(wait, more ? 0 : 10));
    }
  })();
  return {
    name: 'broadcasts',
    wake: () => waker.wake(),
    async stop() {
      stopped = true;
      waker.wake();
      await loop;
    },
  };
}
