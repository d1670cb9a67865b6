import { validationError } from '../../../lib/errors.js';
import { keyedRoutes } from '../../account/keys/principal.js';
import type { AudienceService } from '../../audience/audiences/audiences.service.js';
import type { ContactService } from '../../audience/contacts/contacts.service.js';
import {
  fromResendContact,
  fromResendContactUpdate,
  resendContact,
  resendDeletedContact,
  resendListedContact,
  ResendContactBody,
  ResendContactUpdateBody,
} from './resend-contacts.js';
import { resendContactAudienceRoutes } from './resend-contacts-legacy.routes.js';
import { resendContactListRoutes } from './resend-contacts-lists.routes.js';
import { RESEND_PREFIX } from './resend-errors.js';
import { cursorOf, ResendListQuery, resendList } from './resend-lists.js';

const route = keyedRoutes<{ contacts: ContactService; audiences: AudienceService }>();

/**
 * Resend's contacts over the /v1 contacts service (a create through the audiences service, which
 * adds the audiences it joins to POST /v1/contacts's create); `:contact` is an id (con_…) or an
 * address, as at /v1.
 */
const contactRoutes = [
  route({
    method: 'POST',
    path: `${RESEND_PREFIX}/contacts`,
    scope: 'contacts:manage',
    summary:
      "Resend's contact create: names, unsubscribed, properties, segments (our audiences) it joins and topic choices; answers {object: 'contact', id}",
    body: ResendContactBody,
    async handler({ services, principal, body }) {
      const { body: ours, audienceIds } = fromResendContact(body);
      const { contact } = await services.audiences.createContactIn(principal.project.id, ours, false, audienceIds);
      return { status: 201, body: { object: 'contact', id: contact.id } };
    },
  }),
  ...(['segments', 'audiences'] as const).map((at) =>
    route({
      method: 'GET',
      path: `${RESEND_PREFIX}/${at}/:id/contacts`,
      scope: 'contacts:manage',
      summary: `Resend's list of the contacts of a ${at === 'segments' ? 'segment' : 'audience'} (one of our audiences), newest first`,
      query: ResendListQuery,
      async handler({ services, principal, params, query }) {
        const page = await services.contacts.list(principal.project.id, {
          limit: query.limit,
          ...cursorWords(query),
          audience_id: params.id,
        });
        return { status: 200, body: resendList(page.items.map(resendListedContact), page.nextCursor !== null) };
      },
    }),
  ),
  route({
    method: 'GET',
    path: `${RESEND_PREFIX}/contacts`,
    scope: 'contacts:manage',
    summary: "Resend's list of contacts, newest first: {object: 'list', has_more, data}",
    query: ResendListQuery,
    async handler({ services, principal, query }) {
      const page = await services.contacts.list(principal.project.id, { limit: query.limit, ...cursorWords(query) });
      return { status: 200, body: resendList(page.items.map(resendListedContact), page.nextCursor !== null) };
    },
  }),
  route({
    method: 'GET',
    path: `${RESEND_PREFIX}/contacts/:contact`,
    scope: 'contacts:manage',
    summary: "Resend's contact, by id or address, with its properties as {type, value}",
    async handler({ services, principal, params }) {
      return { status: 200, body: resendContact(await services.contacts.get(principal.project.id, params.contact)) };
    },
  }),
  route({
    method: 'PATCH',
    path: `${RESEND_PREFIX}/contacts/:contact`,
    scope: 'contacts:manage',
    summary: "Resend's contact update (by id or address): names, unsubscribed, properties; null clears one",
    body: ResendContactUpdateBody,
    async handler({ services, principal, params, body }) {
      const c = await services.contacts.update(principal.project.id, params.contact, fromResendContactUpdate(body));
      return { status: 200, body: { object: 'contact', id: c.id } };
    },
  }),
  route({
    method: 'DELETE',
    path: `${RESEND_PREFIX}/contacts/:contact`,
    scope: 'contacts:manage',
    summary: "Resend's contact remove (by id or address): answers {object: 'contact', contact: id, deleted: true}",
    async handler({ services, principal, params }) {
      const c = await services.contacts.delete(principal.project.id, params.contact);
      return { status: 200, body: resendDeletedContact(c) };
    },
  }),
];

/**
 * Resend's imports of a CSV file (multipart/form-data), which this surface does not take: `posthorn
 * contacts import` reads the same columns (docs/contacts.md). Before /contacts/:contact, which
 * would take `imports` for an address.
 */
const importNotAvailable = (method: 'GET' | 'POST', path: string) =>
  route({
    method,
    path: `${RESEND_PREFIX}${path}`,
    scope: 'contacts:manage',
    summary: "Resend's contact imports: not available (posthorn contacts import reads the CSV file)",
    handler: () =>
      Promise.reject(
        validationError(
          'contacts.imports',
          'not available: import the CSV file with `posthorn contacts import` (docs/contacts.md)',
        ),
      ),
  });
const importRoutes = [
  importNotAvailable('POST', '/contacts/imports'),
  importNotAvailable('GET', '/contacts/imports'),
  importNotAvailable('GET', '/contacts/imports/:id'),
];

/** Resend's cursors in the words of our contacts list. */
function cursorWords(q: { after?: string | undefined; before?: string | undefined }) {
  const { before, newerThan } = cursorOf(q);
  return { cursor: before, newerThan };
}

export const resendContactsRoutes = [
  ...importRoutes,
  ...contactRoutes,
  ...resendContactListRoutes,
  ...resendContactAudienceRoutes,
];
