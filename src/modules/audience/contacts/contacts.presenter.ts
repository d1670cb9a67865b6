import { iso } from '../../../lib/time.js';
import type { ContactProperty } from './contact-properties.js';
import type { Contact, ContactWithLists } from './contacts.repo.js';

/** `topics`: the contact's subscription to each topic of the project (its choice, else the topic's default). */
export function presentContact(c: ContactWithLists) {
  return {
    object: 'contact' as const,
    id: c.id,
    email: c.email,
    first_name: c.firstName,
    last_name: c.lastName,
    properties: c.properties,
    unsubscribed: c.unsubscribed,
    pending: c.pending,
    audiences: c.audiences,
    topics: c.topics,
    created_at: iso(c.createdAt),
    updated_at: iso(c.updatedAt),
  };
}

/** The answer of DELETE /v1/contacts/{contact}. */
export function presentDeletedContact(c: Contact) {
  return { object: 'contact' as const, id: c.id, email: c.email, deleted: true };
}

export function presentProperty(p: ContactProperty) {
  return {
    object: 'contact_property' as const,
    key: p.key,
    type: p.type,
    fallback: p.fallback,
    created_at: iso(p.createdAt),
  };
}

/** GET /v1/contact-properties: every one (at most 50), so no next_cursor. */
export function presentProperties(ps: ContactProperty[]) {
  return { object: 'list' as const, data: ps.map(presentProperty) };
}

/** The answer of DELETE /v1/contact-properties/{key}. */
export function presentDeletedProperty(key: string) {
  return { object: 'contact_property' as const, key, deleted: true };
}
