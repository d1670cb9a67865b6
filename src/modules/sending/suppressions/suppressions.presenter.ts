import { iso } from '../../../lib/time.js';
import type { Suppression } from './suppression.js';

/** CONTRACT §5: `{object: "suppression", email, reason, created_at}`, and `expires_at` (null: never) */
export function presentSuppression(s: Suppression) {
  return {
    object: 'suppression' as const,
    email: s.address,
    reason: s.reason,
    created_at: iso(s.createdAt),
    expires_at: iso(s.expiresAt),
  };
}
