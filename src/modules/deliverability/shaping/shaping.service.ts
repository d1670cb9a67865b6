import type { Store } from '../../../store/store.js';
import { pruneShaping } from './shaping.repo.js';
import { dayOf } from './warmup-schedule.js';

const DAY = 86_400_000;

/**
 * The shaping_prune job: per-minute outcomes are kept 25 hours (the status shows the last hour,
 * the lanes the last day), warm-up counts 60 days, and lanes and recipient domains' providers not
 * seen for 30 days are forgotten (a domain's provider is looked up again at its next message).
 */
export async function pruneShapingState(store: Store, now: number): Promise<number> {
  return store.tx((trx) =>
    pruneShaping(trx, Math.floor((now - 25 * 3_600_000) / 60_000), dayOf(now) - 60, now - 30 * DAY),
  );
}
