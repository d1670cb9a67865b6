import { iso } from '../../../lib/time.js';
import type { Suppression } from './suppression.js';

/**
 * `{object: "suppression", email, reason, created_at}`, `expires_at` (null: never), and `bounce`: the
 * bounce that suppressed the address (`reason` of docs/bounces.md's table, `status`, `diagnostic`),
 * null for the other reasons and for bounces suppressed before the reason was kept.
 */
export function presentSuppression(s: Suppression) {
  return {
    object: 'suppression' as const,
    email: s.address,
    reason: s.reason,
    bounce: s.bounce ? { reason: s.bounce.reason, status: s.bounce.status, diagnostic: s.bounce.diagnostic } : null,
    created_at: iso(s.createdAt),
    expires_at: iso(s.expiresAt),
  };
}
