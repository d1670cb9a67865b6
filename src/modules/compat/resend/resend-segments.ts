import { iso } from '../../../lib/time.js';
import type { Audience } from '../../audience/audiences/audiences.repo.js';

// Resend's segment is a named group of contacts that a contact joins and leaves by request: our
// audience (a static list), not our segment (a saved filter, whose members no request can add). So
// /resend/segments (and the legacy /resend/audiences, which Resend's SDK no longer calls) are
// Posthorn's audiences, under the same ids (aud_…) as /v1/audiences.

/** The `object` word: `segment`, or `audience` at the legacy paths. */
export type GroupWord = 'segment' | 'audience';

/** One segment of Resend's lists (GET /segments, GET /contacts/{x}/segments). */
export function resendListedSegment(a: Audience) {
  return { id: a.id, name: a.name, created_at: iso(a.createdAt) };
}

/** GET /segments/{id}. */
export const resendSegment = (a: Audience, object: GroupWord) => ({ object, ...resendListedSegment(a) });

/** POST /segments: `{object, id, name}`. */
export const resendCreatedSegment = (a: Audience, object: GroupWord) => ({ object, id: a.id, name: a.name });

/** DELETE /segments/{id}. */
export const resendDeletedSegment = (a: { id: string }, object: GroupWord) => ({
  object,
  id: a.id,
  deleted: true as const,
});
