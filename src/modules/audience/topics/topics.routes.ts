import { Type } from '@sinclair/typebox';
import { NoNulString, pageQueryFields, StringEnum } from '../../../lib/schema.js';
import { keyedRoutes } from '../../account/keys/principal.js';
import { listBody } from '../../../lib/page.js';
import { presentDeletedTopic, presentTopic } from './topics.presenter.js';
import type { TopicService } from './topics.service.js';
import { DEFAULT_SUBSCRIPTIONS, TOPIC_DEFAULTS } from './default-subscription.js';

const route = keyedRoutes<{ topics: TopicService }>();

const CreateTopicBody = Type.Object(
  {
    name: NoNulString({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(NoNulString({ maxLength: 1000 })),
    default_subscription: Type.Optional(
      StringEnum(DEFAULT_SUBSCRIPTIONS, {
        description:
          "the subscription of a contact who has not chosen: subscribed (every contact but those who unsubscribed gets the topic's broadcasts) or unsubscribed (only contacts who subscribed get them); required unless the deprecated default is given. Resend's and SES's opt_in is subscribed",
      }),
    ),
    default: Type.Optional(
      StringEnum(TOPIC_DEFAULTS, {
        deprecated: true,
        description:
          'deprecated alias of default_subscription, in the opposite words to Resend and SES: opt_in = unsubscribed, opt_out = subscribed; if both are given they must agree',
      }),
    ),
  },
  { additionalProperties: false },
);

const ListQuery = Type.Object(pageQueryFields('top'), { additionalProperties: false });

// Issue 27 (docs/contacts.md): scope contacts:manage; a contact's choices are PATCH /v1/contacts/{id} {topics}
export const topicRoutes = [
  route({
    method: 'POST',
    path: '/v1/topics',
    scope: 'contacts:manage',
    summary:
      'Make a topic: a kind of broadcast mail, and whether a contact who has not chosen gets it (default_subscription)',
    body: CreateTopicBody,
    async handler({ services, principal, body }) {
      return { status: 201, body: presentTopic(await services.topics.create(principal.project.id, body)) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/topics',
    scope: 'contacts:manage',
    summary: "The project's topics, newest first",
    query: ListQuery,
    async handler({ services, principal, query }) {
      const page = await services.topics.list(principal.project.id, query.limit, query.cursor);
      return { status: 200, body: listBody(page, presentTopic) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/topics/:id',
    scope: 'contacts:manage',
    summary: 'A topic',
    async handler({ services, principal, params }) {
      return { status: 200, body: presentTopic(await services.topics.get(principal.project.id, params.id)) };
    },
  }),
  route({
    method: 'PATCH',
    path: '/v1/topics/:id',
    scope: 'contacts:manage',
    summary: "Change a topic's name or description (its default_subscription is kept)",
    body: Type.Object(
      {
        name: Type.Optional(NoNulString({ minLength: 1, maxLength: 200 })),
        description: Type.Optional(Type.Union([NoNulString({ maxLength: 1000 }), Type.Null()])),
      },
      { additionalProperties: false },
    ),
    async handler({ services, principal, params, body }) {
      return { status: 200, body: presentTopic(await services.topics.update(principal.project.id, params.id, body)) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/v1/topics/:id',
    scope: 'contacts:manage',
    summary: "Delete a topic and the contacts' choices about it",
    async handler({ services, principal, params }) {
      return { status: 200, body: presentDeletedTopic(await services.topics.delete(principal.project.id, params.id)) };
    },
  }),
];
