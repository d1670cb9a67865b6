import { keyedRoutes } from '../../account/keys/principal.js';
import type { TopicService } from '../../audience/topics/topics.service.js';
import { RESEND_PREFIX } from './resend-errors.js';
import { resendList } from './resend-lists.js';
import { allTopics, fromResendTopic, ResendTopicBody, resendTopic, ResendTopicUpdateBody } from './resend-topics.js';

const route = keyedRoutes<{ topics: TopicService }>();

// Resend's topics over the /v1 topics service (resend-topics.ts maps Resend's opt_in/opt_out).
export const resendTopicsRoutes = [
  route({
    method: 'POST',
    path: `${RESEND_PREFIX}/topics`,
    scope: 'contacts:manage',
    summary:
      "Resend's topic create: default_subscription opt_in (a contact who has not chosen gets it: our subscribed) or opt_out; answers {id}",
    body: ResendTopicBody,
    async handler({ services, principal, body }) {
      const t = await services.topics.create(principal.project.id, fromResendTopic(body));
      return { status: 201, body: { id: t.id } };
    },
  }),
  route({
    method: 'GET',
    path: `${RESEND_PREFIX}/topics`,
    scope: 'contacts:manage',
    summary: "Resend's list of topics: all of them, newest first",
    async handler({ services, principal }) {
      return {
        status: 200,
        body: resendList((await allTopics(services.topics, principal.project.id)).map(resendTopic), false),
      };
    },
  }),
  route({
    method: 'GET',
    path: `${RESEND_PREFIX}/topics/:id`,
    scope: 'contacts:manage',
    summary: "Resend's topic, its default_subscription in Resend's words",
    async handler({ services, principal, params }) {
      return { status: 200, body: resendTopic(await services.topics.get(principal.project.id, params.id)) };
    },
  }),
  route({
    method: 'PATCH',
    path: `${RESEND_PREFIX}/topics/:id`,
    scope: 'contacts:manage',
    summary: "Resend's topic update: its name or description",
    body: ResendTopicUpdateBody,
    async handler({ services, principal, params, body }) {
      const t = await services.topics.update(principal.project.id, params.id, {
        name: body.name,
        description: body.description,
      });
      return { status: 200, body: { id: t.id } };
    },
  }),
  route({
    method: 'DELETE',
    path: `${RESEND_PREFIX}/topics/:id`,
    scope: 'contacts:manage',
    summary: "Resend's topic remove: the contacts' choices about it go with it",
    async handler({ services, principal, params }) {
      const t = await services.topics.delete(principal.project.id, params.id);
      return { status: 200, body: { object: 'topic', id: t.id, deleted: true } };
    },
  }),
];
