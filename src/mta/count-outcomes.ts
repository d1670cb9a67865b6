import { deliveries } from '../log/metrics.js';
import type { Completed } from './record.js';

/**
 * posthorn_deliveries_total: each recipient's outcome of a delivery attempt, with the bounce reason
 * when it bounced, counted once its outcome is recorded. Test mail's simulated attempts are not
 * deliveries and are not counted.
 */
export function countOutcomes(items: readonly Completed[]): void {
  for (const { outcomes } of items) {
    for (const o of outcomes.values())
      deliveries.inc({ outcome: o.kind, reason: o.kind === 'bounced' ? o.bounce.reason : '' });
  }
}
