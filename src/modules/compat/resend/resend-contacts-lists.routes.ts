import { keyedRoutes } from '../../account/keys/principal.js';
import type { AudienceService } from '../../audience/audiences/audiences.service.js';
import type { ContactService } from '../../audience/contacts/contacts.service.js';
import { subscribedByDefault } from '../../audience/topics/default-subscription.js';
import type { TopicService } from '../../audience/topics/topics.service.js';
import { choicesIn, ResendContactTopicsBody, topicChoicesOf } from './resend-contacts.js';
import { pageHeld } from './resend-contacts-pages.js';
import { RESEND_PREFIX } from './resend-errors.js';
import { ResendListQuery, resendList } from './resend-lists.js';
import { resendListedSegment } from './resend-segments.js';
import { allTopics, resendContactTopic } from './resend-topics.js';

const route = keyedRoutes<{ contacts: ContactService; audiences: AudienceService; topics: TopicService }>();

const at = `${RESEND_PREFIX}/contacts/:contact`;

// A contact's segments (our audiences) and its topic subscriptions, as Resend's sub-resources of a
// contact (by id or address), over the /v1 contacts, audiences and topics services.
export const resendContactListRoutes = [
  route({
    method: 'GET',
    path: `${at}/segments`,
    scope: 'contacts:manage',
    summary: "Resend's list of a contact's segments (our audiences it is in), newest first",
    query: ResendListQuery,
    async handler({ services, principal, params, query }) {
      const c = await services.contacts.get(principal.project.id, params.contact);
      const audiences = await services.audiences.several(principal.project.id, c.audiences);
      const page = pageHeld(audiences.map(resendListedSegment), query);
      return { status: 200, body: resendList(page.data, page.hasMore) };
    },
  }),
  route({
    method: 'POST',
    path: `${at}/segments/:segment`,
    scope: 'contacts:manage',
    summary: "Resend's add of a contact to a segment (one of our audiences); answers {id} of the segment",
    async handler({ services, principal, params }) {
      const c = await services.contacts.get(principal.project.id, params.contact);
      await services.audiences.addContacts(principal.project.id, params.segment, { contact_ids: [c.id] });
      return { status: 200, body: { id: params.segment } };
    },
  }),
  route({
    method: 'DELETE',
    path: `${at}/segments/:segment`,
    scope: 'contacts:manage',
    summary: "Resend's removal of a contact from a segment (one of our audiences); the contact stays",
    async handler({ services, principal, params }) {
      const { audience } = await services.audiences.removeContact(principal.project.id, params.segment, params.contact);
      return { status: 200, body: { id: audience.id, audienceId: audience.id, deleted: true } };
    },
  }),
  route({
    method: 'GET',
    path: `${at}/topics`,
    scope: 'contacts:manage',
    summary:
      "Resend's list of a contact's topic subscriptions: opt_in (gets the topic's broadcasts) or opt_out, its choice or else the topic's default",
    query: ResendListQuery,
    async handler({ services, principal, params, query }) {
      const c = await services.contacts.get(principal.project.id, params.contact);
      const topics = await allTopics(services.topics, principal.project.id);
      // a topic made since the contact was read: the contact has not chosen
      const rows = topics.map((t) => resendContactTopic(t, c.topics[t.id] ?? subscribedByDefault(t.default)));
      const page = pageHeld(rows, query);
      return { status: 200, body: resendList(page.data, page.hasMore) };
    },
  }),
  route({
    method: 'PATCH',
    path: `${at}/topics`,
    scope: 'contacts:manage',
    summary:
      "Resend's update of a contact's topic choices: [{id, subscription: 'opt_in'|'opt_out'}] (or {topics: [...]}); the others are kept",
    body: ResendContactTopicsBody,
    async handler({ services, principal, params, body }) {
      const topics = topicChoicesOf(choicesIn(body));
      const c = await services.contacts.update(principal.project.id, params.contact, { topics });
      return { status: 200, body: { id: c.id } };
    },
  }),
];
