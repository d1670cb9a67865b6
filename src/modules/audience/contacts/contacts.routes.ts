import { keyedRoutes } from '../../account/keys/principal.js';
import { validationError } from '../../../lib/errors.js';
import { listBody, type Page } from '../../../lib/page.js';
import {
  presentContact,
  presentDeletedContact,
  presentDeletedProperty,
  presentProperties,
  presentProperty,
} from './contacts.presenter.js';
import type { ContactWithLists } from './contacts.repo.js';
import {
  CreateContactBody,
  CreateContactQuery,
  CreatePropertyBody,
  ListContactsQuery,
  UpdateContactBody,
} from './contacts.schema.js';
import type { ContactService } from './contacts.service.js';
/** What these routes need of the segments service (segments read contacts: importing it here would make a cycle). */
interface SegmentMembers {
  contacts(projectId: string, id: string, limit: number, cursor: string | undefined): Promise<Page<ContactWithLists>>;
}

const route = keyedRoutes<{ contacts: ContactService; segments: SegmentMembers }>();

// Issue 27 (interface §4.6 leaves the group open; docs/contacts.md): scope contacts:manage everywhere
export const contactRoutes = [
  route({
    method: 'POST',
    path: '/v1/contact-properties',
    scope: 'contacts:manage',
    summary:
      'Declare a contact property: its key, its type (string, number, boolean, date) and a fallback; at most 50 per project',
    body: CreatePropertyBody,
    async handler({ services, principal, body }) {
      return { status: 201, body: presentProperty(await services.contacts.createProperty(principal.project.id, body)) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/contact-properties',
    scope: 'contacts:manage',
    summary: "The project's contact properties, by key",
    async handler({ services, principal }) {
      return { status: 200, body: presentProperties(await services.contacts.listProperties(principal.project.id)) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/v1/contact-properties/:key',
    scope: 'contacts:manage',
    summary:
      'Remove a contact property declaration (the values contacts hold stay until changed); 409 while a segment reads it',
    async handler({ services, principal, params }) {
      await services.contacts.deleteProperty(principal.project.id, params.key);
      return { status: 200, body: presentDeletedProperty(params.key) };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/contacts',
    scope: 'contacts:manage',
    summary:
      'Add a contact (201); the address is unique in the project: 409 contact_exists, or with ?upsert=true that contact is changed (200)',
    body: CreateContactBody,
    query: CreateContactQuery,
    async handler({ services, principal, body, query }) {
      const { contact, created } = await services.contacts.create(principal.project.id, body, query.upsert === true);
      return { status: created ? 201 : 200, body: presentContact(contact) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/contacts',
    scope: 'contacts:manage',
    summary: 'List contacts, newest first, by audience, segment or a part of the address',
    query: ListContactsQuery,
    async handler({ services, principal, query }) {
      if (query.segment_id && (query.audience_id || query.email))
        throw validationError('segment_id', 'cannot be combined with audience_id or email');
      const page = query.segment_id
        ? await services.segments.contacts(principal.project.id, query.segment_id, query.limit, query.cursor)
        : await services.contacts.list(principal.project.id, query);
      return { status: 200, body: listBody(page, presentContact) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/contacts/:contact',
    scope: 'contacts:manage',
    summary: 'A contact by id (con_…) or address',
    async handler({ services, principal, params }) {
      return { status: 200, body: presentContact(await services.contacts.get(principal.project.id, params.contact)) };
    },
  }),
  route({
    method: 'PATCH',
    path: '/v1/contacts/:contact',
    scope: 'contacts:manage',
    summary: 'Change a contact (by id or address): names, address, properties (null removes one), unsubscribed',
    body: UpdateContactBody,
    async handler({ services, principal, params, body }) {
      const contact = await services.contacts.update(principal.project.id, params.contact, body);
      return { status: 200, body: presentContact(contact) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/v1/contacts/:contact',
    scope: 'contacts:manage',
    summary: 'Delete a contact (by id or address) and its audience memberships',
    async handler({ services, principal, params }) {
      const contact = await services.contacts.delete(principal.project.id, params.contact);
      return { status: 200, body: presentDeletedContact(contact) };
    },
  }),
];
