import { notFound } from '../../../lib/errors.js';
import type { Store } from '../../../store/store.js';
import { tally, timeline } from './broadcast-report.js';
import { bouncesOf, hourCounts } from './broadcast-report.repo.js';
import { findBroadcast, outcomeCounts } from './broadcasts.repo.js';

/** GET /v1/broadcasts/{id}/report: the broadcast with its counts, its bounces by reason and type, and its hours. */
export function broadcastReports(deps: { store: Store }) {
  return {
    async report(projectId: string, id: string) {
      const db = deps.store.reader;
      const broadcast = await findBroadcast(db, projectId, id);
      if (!broadcast) throw notFound(`broadcast ${id}`);
      const [outcomes, bounces, hours] = await Promise.all([
        outcomeCounts(db, [id]),
        bouncesOf(db, id),
        hourCounts(db, id),
      ]);
      return {
        counted: { broadcast, outcomes: outcomes.get(id)! },
        byReason: tally(
          bounces.map((b) => b.reason),
          'reason',
        ),
        byType: tally(
          bounces.map((b) => b.type),
          'bounce_type',
        ),
        hours: timeline(hours),
      };
    },
  };
}
