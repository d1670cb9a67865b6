import type { Clock } from '../lib/time.js';
import type { Logger } from '../log/logger.js';
import { Waker } from '../lib/waker.js';
import type { BroadcastFanOut } from '../modules/audience/broadcasts/fan-out.js';
import type { Role } from './role.js';

export interface FanOutRole extends Role {
  /** a broadcast was sent or scheduled */
  wake(): void;
}

/** How long the loop sleeps with nothing to do, at most: a scheduled broadcast's time is looked at this often too. */
const IDLE_MS = 5_000;

/**
 * The broadcast fan-out (modules/audience/broadcasts/fan-out.ts) in the thread of the
 * accept group commit: one batch of each broadcast in turn, round after
 * round, while any has work; then asleep until woken, the pacing allows the
 * next batch, or the next scheduled one is due. A broadcast whose batch
 * fails is logged and left alone for a while; the others go on.
 */
export function startFanOut(
  fanOut: BroadcastFanOut,
  clock: Clock,
  logger: Logger,
  onWake: (wake: () => void) => void,
): FanOutRole {
  const waker = new Waker();
  onWake(() => waker.wake());
  let stopped = false;
  const round = async (): Promise<boolean> => {
    const due = await fanOut.due();
    // the live ones share the pacing's tokens
    const sharing = due.filter((b) => b.environment === 'live' && b.status === 'sending').length;
    let more = false;
    for (const b of due) {
      if (stopped) break;
      try {
        more = (await fanOut.step(b, sharing)) || more;
      } catch (e) {
        logger.error({ err: e, broadcast: b.id }, 'broadcast fan-out batch failed; trying it again later');
        fanOut.backOff(b.id);
      }
    }
    return more;
  };
  const loop = (async () => {
    while (!stopped) {
      let wait: number;
      try {
        const more = await round();
        const next = await fanOut.nextScheduledAt();
        wait = Math.min(more ? fanOut.paceWait() : IDLE_MS, next === null ? IDLE_MS : Math.max(0, next - clock.now()));
      } catch (e) {
        logger.error({ err: e }, 'broadcast fan-out could not read its work; trying again');
        wait = 1_000;
      }
      if (wait > 0) await waker.sleep(wait);
      // a busy fan-out still lets the thread's other work (accepts, the MTA) in between batches
      else await new Promise((r) => setImmediate(r));
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
