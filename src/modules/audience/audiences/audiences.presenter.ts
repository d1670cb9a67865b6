import { iso } from '../../../lib/time.js';
import type { Contact } from '../contacts/contacts.repo.js';
import type { Audience, CountedAudience } from './audiences.repo.js';

/** docs/contacts.md: `{object: "audience", id, name, contact_count, created_at}` */
export function presentAudience(a: CountedAudience) {
  return {
    object: 'audience' as const,
    id: a.id,
    name: a.name,
    contact_count: a.contactCount,
    created_at: iso(a.createdAt),
  };
}

/** The answer of DELETE /v1/audiences/{id}. */
export function presentDeletedAudience(a: Audience) {
  return { object: 'audience' as const, id: a.id, deleted: true };
}

/** The answer of DELETE /v1/audiences/{id}/contacts/{contact}. */
export function presentRemovedMember(a: Audience, c: Contact) {
  return { object: 'audience_contact' as const, audience_id: a.id, contact_id: c.id, deleted: true };
}
