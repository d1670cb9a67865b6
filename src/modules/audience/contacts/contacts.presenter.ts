import { iso } from '../../../lib/time.js';
import type { ContactProperty } from './contact-properties.js';
import type { Contact } from './contacts.repo.js';

/** `topics`: the contact's subscription to each topic of the project (its choice, else the topic's default). */
export function presentContact(c: Contact, audiences: string[], topics: Record<string, boolean>) {
  return {
    object: 'contact' as const,
    id: c.id,
    email: c.email,
    first_name: c.firstName,
    last_name: c.lastName,
    properties: c.properties,
    unsubscribed: c.unsubscribed,
    pending: c.pending,
    audiences,
    topics,
    created_at: iso(c.createdAt),
    updated_at: iso(c.updatedAt),
  };
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
