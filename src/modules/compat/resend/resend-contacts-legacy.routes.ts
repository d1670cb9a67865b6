import { notFound, validationError } from '../../../lib/errors.js';
import { keyedRoutes } from '../../account/keys/principal.js';
import type { AudienceService } from '../../audience/audiences/audiences.service.js';
import type { ContactService } from '../../audience/contacts/contacts.service.js';
import {
  fromResendContact,
  fromResendContactUpdate,
  resendContact,
  resendDeletedContact,
  ResendContactBody,
  ResendContactUpdateBody,
} from './resend-contacts.js';
import { RESEND_PREFIX } from './resend-errors.js';

type Services = { contacts: ContactService; audiences: AudienceService };
const route = keyedRoutes<Services>();

// Resend's legacy contacts API, where a contact belonged to an audience: /audiences/{id}/contacts.
// Our contacts are the project's, and an audience a list of them (as Resend's contacts are now
// global and its audiences segments): a create adds the address's contact to the audience,
// making it or changing it; a get or change finds it only in that audience; a remove takes it out
// of the audience and the contact stays (docs/resend.md).

/** The contact, if it is in the audience (404 for the audience, or for the contact in it). */
async function memberOf(services: Services, projectId: string, audienceId: string, contact: string) {
  await services.audiences.get(projectId, audienceId);
  const c = await services.contacts.get(projectId, contact);
  if (!c.audiences.includes(audienceId)) throw notFound(`contact ${contact} in audience ${audienceId}`);
  return c;
}

export const resendContactAudienceRoutes = [
  route({
    method: 'POST',
    path: `${RESEND_PREFIX}/audiences/:id/contacts`,
    scope: 'contacts:manage',
    summary:
      "Resend's legacy contact create: the address's contact (made, or changed as given) joins the audience; answers {object: 'contact', id}",
    body: ResendContactBody,
    async handler({ services, principal, params, body }) {
      if (body.segments !== undefined || body.topics !== undefined)
        throw validationError(
          body.segments !== undefined ? 'segments' : 'topics',
          'not available with an audience in the path: POST /contacts takes segments and topics',
        );
      const { body: ours } = fromResendContact(body);
      const { contact } = await services.audiences.createContactIn(principal.project.id, ours, true, [params.id]);
      return { status: 201, body: { object: 'contact', id: contact.id } };
    },
  }),
  route({
    method: 'GET',
    path: `${RESEND_PREFIX}/audiences/:id/contacts/:contact`,
    scope: 'contacts:manage',
    summary: "Resend's legacy contact get: the contact (by id or address) if it is in the audience",
    async handler({ services, principal, params }) {
      return {
        status: 200,
        body: resendContact(await memberOf(services, principal.project.id, params.id, params.contact)),
      };
    },
  }),
  route({
    method: 'PATCH',
    path: `${RESEND_PREFIX}/audiences/:id/contacts/:contact`,
    scope: 'contacts:manage',
    summary: "Resend's legacy contact update: the contact (by id or address) if it is in the audience",
    body: ResendContactUpdateBody,
    async handler({ services, principal, params, body }) {
      const ours = fromResendContactUpdate(body);
      const c = await memberOf(services, principal.project.id, params.id, params.contact);
      await services.contacts.update(principal.project.id, c.id, ours);
      return { status: 200, body: { object: 'contact', id: c.id } };
    },
  }),
  route({
    method: 'DELETE',
    path: `${RESEND_PREFIX}/audiences/:id/contacts/:contact`,
    scope: 'contacts:manage',
    summary: "Resend's legacy contact remove: the contact leaves the audience (it stays a contact of the project)",
    async handler({ services, principal, params }) {
      const { contact } = await services.audiences.removeContact(principal.project.id, params.id, params.contact);
      return { status: 200, body: resendDeletedContact(contact) };
    },
  }),
];
