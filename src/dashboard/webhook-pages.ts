import type { RouterContext } from '@koa/router';
import { ApiError } from '../lib/errors.js';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import { DEFAULT_SUBSCRIPTION, EVENT_TYPES } from '../modules/notifying/events/event-types.js';
import { TEST_EVENT_TYPES } from '../modules/notifying/webhooks/test-event.js';
import { PAYLOAD_FORMATS, SIGNATURE_FORMATS } from '../modules/notifying/webhooks/webhook-formats.js';
import { formFieldOf, type FormError } from './pages/form-errors.js';
import { BASE } from './pages/layout.js';
import { ENDPOINT_FIELDS, endpointValues, type EndpointFormValues } from './pages/webhook-form.js';
import {
  deleteEndpointPage,
  endpointListPage,
  endpointPage,
  type DeliveryJson,
  type EndpointJson,
  type EndpointView,
  type NewEndpointJson,
} from './pages/webhooks.js';
import { idOf, page, type PagesDeps, seeOther, text, deleteRoutes } from './respond.js';

const CHOICES = { eventTypes: EVENT_TYPES, signatures: SIGNATURE_FORMATS, payloads: PAYLOAD_FORMATS };
const NEW_ENDPOINT: EndpointFormValues = {
  url: '',
  description: '',
  events: [...DEFAULT_SUBSCRIPTION],
  signature: 'service',
  payload: 'service',
};

/** What each ?done= of a redirect after an action says on the endpoint's page. */
const DONE: Record<string, (v: string) => string> = {
  replayed: (id) => `Replay queued for event ${id}: it appears at the top of the log.`,
  tested: (id) => `Test event ${id} queued: it appears at the top of the log.`,
  saved: () => 'Settings saved.',
  paused: () => 'Paused: events that happen from now on are not sent to it; deliveries already due wait.',
  resumed: () => 'Resumed: new events are sent to it again, and deliveries that waited go out.',
};

/** A refusal the form can show beside a field (or above it); anything else is the error page's. */
function refusal(e: unknown): FormError | null {
  if (!(e instanceof ApiError) || e.status >= 500 || e.code === 'not_found' || e.code === 'unauthorized') return null;
  return { message: e.message, field: formFieldOf(e.field, ENDPOINT_FIELDS) };
}

/** The API's body for the form's values: a blank description is none. */
const bodyOf = (v: EndpointFormValues, creating: boolean) => ({
  url: v.url,
  ...(v.description ? { description: v.description } : creating ? {} : { description: null }),
  events: v.events,
  signature: v.signature,
  payload: v.payload,
});

/**
 * Webhooks: the endpoints and a form that adds one (its secret shown once, in the answer), an endpoint's
 * settings, pause and resume, a test event, secret rotation, delete after a confirmation, and its delivery
 * log with replay.
 */
export function webhookPages(deps: PagesDeps): void {
  const v = views(deps);
  endpointRoutes(deps, v);
  actionRoutes(deps, v);
}

type Views = ReturnType<typeof views>;

/** The pages the routes answer with, read through the API as the signed-in key. */
function views({ call }: PagesDeps) {
  const endpointOf = async (session: Session, id: string) =>
    (await call(session.principal, 'GET', `/v1/webhooks/${id}`)).body as EndpointJson;
  const endpoint = async (
    ctx: RouterContext,
    session: Session,
    extra: Partial<EndpointView> = {},
    status = 200,
    id = idOf(ctx),
  ) => {
    const cursor = ctx.method === 'GET' ? text(ctx.query.cursor) : undefined;
    const [e, deliveries] = await Promise.all([
      endpointOf(session, id),
      call(session.principal, 'GET', `/v1/webhooks/${id}/deliveries`, { query: cursor ? { cursor } : {} }),
    ]);
    const base = { choices: CHOICES, testTypes: TEST_EVENT_TYPES };
    const deliveryPage = deliveries.body as EndpointView['deliveries'];
    page(ctx, status, endpointPage(session, { endpoint: e, deliveries: deliveryPage, ...base, ...extra }));
  };
  const list = async (ctx: RouterContext, session: Session, form = NEW_ENDPOINT, error?: FormError, status = 200) => {
    const endpoints = ((await call(session.principal, 'GET', '/v1/webhooks')).body as { data: EndpointJson[] }).data;
    const deleted = ctx.method === 'GET' ? text(ctx.query.deleted) : undefined;
    page(ctx, status, endpointListPage(session, { endpoints, choices: CHOICES, form, error, deleted }));
  };
  return { endpointOf, endpoint, list };
}

const form = (ctx: RouterContext) => ctx.state.form as URLSearchParams;

/** The list, adding an endpoint, an endpoint's page and its settings. */
function endpointRoutes({ router, call, signedIn }: PagesDeps, v: Views): void {
  router.get(
    '/webhooks',
    signedIn(async (ctx, session) => v.list(ctx, session)),
  );
  router.post(
    '/webhooks',
    signedIn(async (ctx, session) => {
      const values = endpointValues(form(ctx));
      let created: NewEndpointJson;
      try {
        created = (await call(session.principal, 'POST', '/v1/webhooks', { body: bodyOf(values, true) }))
          .body as NewEndpointJson;
      } catch (e) {
        const r = refusal(e);
        if (!r) throw e;
        return v.list(ctx, session, values, r, (e as ApiError).status);
      }
      // the secret is in this answer only (never cached, never after a redirect)
      const newSecret = { secret: created.secret, previousExpiresAt: null, created: true };
      await v.endpoint(ctx, session, { newSecret }, 201, encodeURIComponent(created.id));
    }),
  );
  router.get(
    '/webhooks/:id',
    signedIn(async (ctx, session) => {
      const [kind, value] = Object.entries(ctx.query).find(([k]) => k in DONE) ?? [];
      await v.endpoint(ctx, session, kind && typeof value === 'string' ? { done: DONE[kind](value) } : {});
    }),
  );
  router.post(
    '/webhooks/:id',
    signedIn(async (ctx, session) => {
      const values = endpointValues(form(ctx));
      try {
        await call(session.principal, 'PATCH', `/v1/webhooks/${idOf(ctx)}`, { body: bodyOf(values, false) });
      } catch (e) {
        const r = refusal(e);
        if (!r) throw e;
        return v.endpoint(ctx, session, { settings: { values, error: r } }, (e as ApiError).status);
      }
      seeOther(ctx, `${BASE}/webhooks/${idOf(ctx)}?saved=1`);
    }),
  );
}

/** The buttons of an endpoint's page: pause and resume, test event, replay, secret rotation, delete. */
function actionRoutes({ router, call, signedIn }: PagesDeps, v: Views): void {
  const post = (path: string, body?: unknown) => (ctx: RouterContext, session: Session) =>
    call(session.principal, 'POST', `/v1/webhooks/${idOf(ctx)}${path}`, body === undefined ? {} : { body });
  router.post(
    '/webhooks/:id/active',
    signedIn(async (ctx, session) => {
      const active = form(ctx).get('active') === 'true';
      await call(session.principal, 'PATCH', `/v1/webhooks/${idOf(ctx)}`, { body: { active } });
      seeOther(ctx, `${BASE}/webhooks/${idOf(ctx)}?${active ? 'resumed' : 'paused'}=1`);
    }),
  );
  router.post(
    '/webhooks/:id/test',
    signedIn(async (ctx, session) => {
      const d = (await post('/test', { type: form(ctx).get('type') ?? '' })(ctx, session)).body as DeliveryJson;
      seeOther(ctx, `${BASE}/webhooks/${idOf(ctx)}?tested=${encodeURIComponent(d.event_id)}`);
    }),
  );
  router.post(
    '/webhooks/:id/replay',
    signedIn(async (ctx, session) => {
      const body = { event_id: form(ctx).get('event_id') ?? '' };
      const d = (await post('/replay', body)(ctx, session)).body as DeliveryJson;
      seeOther(ctx, `${BASE}/webhooks/${idOf(ctx)}?replayed=${encodeURIComponent(d.event_id)}`);
    }),
  );
  router.post(
    '/webhooks/:id/rotate-secret',
    signedIn(async (ctx, session) => {
      // answered here, not redirected: the secret is in this response only (and it is never cached)
      const r = (await post('/rotate-secret')(ctx, session)).body as {
        secret: string;
        previous_secret_expires_at: string | null;
      };
      await v.endpoint(ctx, session, {
        newSecret: { secret: r.secret, previousExpiresAt: r.previous_secret_expires_at, created: false },
      });
    }),
  );
  deleteRoutes({ router, call, signedIn }, '/webhooks', {
    read: (session, id) => v.endpointOf(session, id),
    confirm: deleteEndpointPage,
    after: (id) => `/webhooks?deleted=${id}`,
  });
}
