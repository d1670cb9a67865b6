import { iso } from '../../../lib/time.js';
import type { Segment } from './segments.repo.js';

/** docs/contacts.md: `{object: "segment", id, name, audience_id, filter, created_at}` */
export function presentSegment(s: Segment) {
  return {
    object: 'segment' as const,
    id: s.id,
    name: s.name,
    audience_id: s.audienceId,
    filter: s.filter,
    created_at: iso(s.createdAt),
  };
}

/** The answer of DELETE /v1/segments/{id}. */
export function presentDeletedSegment(s: Segment) {
  return { object: 'segment' as const, id: s.id, deleted: true };
}
