import { keyedRoutes } from '../../account/keys/principal.js';
import { listBody } from '../../../lib/page.js';
import { presentAudience, presentDeletedAudience, presentRemovedMember } from './audiences.presenter.js';
import { AddContactsBody, CreateAudienceBody, ListAudiencesQuery } from './audiences.schema.js';
import type { AudienceService } from './audiences.service.js';
const route = keyedRoutes<{ audiences: AudienceService }>();

// Issue 27 (docs/contacts.md): scope contacts:manage everywhere
export const audienceRoutes = [
  route({
    method: 'POST',
    path: '/v1/audiences',
    scope: 'contacts:manage',
    summary: 'Make an audience: a named list of contacts that broadcasts are sent to',
    body: CreateAudienceBody,
    async handler({ services, principal, body }) {
      return { status: 201, body: presentAudience(await services.audiences.create(principal.project.id, body.name)) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/audiences',
    scope: 'contacts:manage',
    summary: 'List audiences, newest first, with their contact counts',
    query: ListAudiencesQuery,
    async handler({ services, principal, query }) {
      const page = await services.audiences.list(principal.project.id, query.limit, query.cursor);
      return { status: 200, body: listBody(page, presentAudience) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/audiences/:id',
    scope: 'contacts:manage',
    summary: 'An audience with its contact count',
    async handler({ services, principal, params }) {
      return { status: 200, body: presentAudience(await services.audiences.get(principal.project.id, params.id)) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/v1/audiences/:id',
    scope: 'contacts:manage',
    summary: 'Delete an audience (its contacts stay); 409 while a segment uses it',
    async handler({ services, principal, params }) {
      const audience = await services.audiences.delete(principal.project.id, params.id);
      return { status: 200, body: presentDeletedAudience(audience) };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/audiences/:id/contacts',
    scope: 'contacts:manage',
    summary:
      'Add contacts to an audience by id, or by address (a contact is made for an address the project does not have)',
    body: AddContactsBody,
    async handler({ services, principal, params, body }) {
      const { audience, added, createdContacts } = await services.audiences.addContacts(
        principal.project.id,
        params.id,
        body,
      );
      return { status: 200, body: { ...presentAudience(audience), added, created_contacts: createdContacts } };
    },
  }),
  route({
    method: 'DELETE',
    path: '/v1/audiences/:id/contacts/:contact',
    scope: 'contacts:manage',
    summary: 'Take a contact (by id or address) out of an audience',
    async handler({ services, principal, params }) {
      const { audience, contact } = await services.audiences.removeContact(
        principal.project.id,
        params.id,
        params.contact,
      );
      return { status: 200, body: presentRemovedMember(audience, contact) };
    },
  }),
];
