import { Type } from '@sinclair/typebox';
import { NoNulString, pageQueryFields, StringEnum } from '../../../lib/schema.js';
import { keyedRoutes } from '../../account/keys/principal.js';
import { listBody } from '../../../lib/page.js';
import { presentDeletedTopic, presentTopic } from './topics.presenter.js';
import type { TopicService } from './topics.service.js';

const route = keyedRoutes<{ topics: TopicService }>();

const CreateTopicBody = Type.Object(
  {
    name: NoNulString({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(NoNulString({ maxLength: 1000 })),
    default: StringEnum(['opt_in', 'opt_out'] as const, {
      description:
        "opt_in: only contacts who subscribed get the topic's broadcasts; opt_out: every contact but those who unsubscribed from it",
    }),
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
    summary: 'Make a topic: a kind of broadcast mail contacts subscribe to (opt_in) or may leave (opt_out)',
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
    method: 'DELETE',
    path: '/v1/topics/:id',
    scope: 'contacts:manage',
    summary: "Delete a topic and the contacts' choices about it",
    async handler({ services, principal, params }) {
      return { status: 200, body: presentDeletedTopic(await services.topics.delete(principal.project.id, params.id)) };
    },
  }),
];
