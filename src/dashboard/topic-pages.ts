import type { RouterContext } from '@koa/router';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import { attempt, cursorOf, doneOf, form, listOf } from './contact-common.js';
import type { TopicJson } from './pages/contact-shared.js';
import type { FormError } from './pages/form-errors.js';
import { BASE } from './pages/layout.js';
import {
  deleteTopicPage,
  TOPIC_FIELDS,
  topicListPage,
  topicPage,
  topicValues,
  type TopicFormValues,
} from './pages/topics.js';
import { idOf, page, type PagesDeps, seeOther, deleteRoutes } from './respond.js';

const DONE: Record<string, (v: string) => string> = {
  deleted: (id) => `Topic ${id} is deleted.`,
  created: () => 'Topic made: contacts can choose it on their preference page, and broadcasts can be sent on it.',
  saved: () => 'Topic saved.',
};

const NEW_TOPIC: TopicFormValues = { name: '', description: '', default_subscription: 'subscribed' };

/** Topics: the list, making one, changing its name and description, deleting it. */
export function topicPages({ router, call, signedIn }: PagesDeps): void {
  const topicOf = async (session: Session, id: string) =>
    (await call(session.principal, 'GET', `/v1/topics/${id}`)).body as TopicJson;
  const list = async (ctx: RouterContext, session: Session, values = NEW_TOPIC, error?: FormError, status = 200) => {
    const topics = await listOf<TopicJson>(call, session, '/v1/topics', { cursor: cursorOf(ctx) });
    page(ctx, status, topicListPage(session, { topics, form: values, error, done: doneOf(ctx, DONE) }));
  };

  router.get('/topics', signedIn(list));
  router.post(
    '/topics',
    signedIn(async (ctx, session) => {
      const values = topicValues(form(ctx));
      const body = {
        name: values.name,
        ...(values.description ? { description: values.description } : {}),
        default_subscription: values.default_subscription,
      };
      const r = await attempt(TOPIC_FIELDS, () => call(session.principal, 'POST', '/v1/topics', { body }));
      if (!r.ok) return list(ctx, session, values, r.error, r.status);
      seeOther(ctx, `${BASE}/topics/${(r.value.body as TopicJson).id}?created=1`);
    }),
  );
  router.get(
    '/topics/:id',
    signedIn(async (ctx, session) =>
      page(ctx, 200, topicPage(session, await topicOf(session, idOf(ctx)), { done: doneOf(ctx, DONE) })),
    ),
  );
  router.post(
    '/topics/:id',
    signedIn(async (ctx, session) => {
      const values = topicValues(form(ctx));
      const body = { name: values.name, description: values.description || null };
      const r = await attempt(TOPIC_FIELDS, () =>
        call(session.principal, 'PATCH', `/v1/topics/${idOf(ctx)}`, { body }),
      );
      if (!r.ok)
        return page(ctx, r.status, topicPage(session, await topicOf(session, idOf(ctx)), { values, error: r.error }));
      seeOther(ctx, `${BASE}/topics/${idOf(ctx)}?saved=1`);
    }),
  );
  deleteRoutes({ router, call, signedIn }, '/topics', {
    read: (session, id) => topicOf(session, id),
    confirm: deleteTopicPage,
    after: (id) => `/topics?deleted=${id}`,
  });
}
