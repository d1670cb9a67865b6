import type { RouterContext } from '@koa/router';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import { BASE } from './pages/layout.js';
import {
  endpointListPage,
  endpointPage,
  type DeliveryJson,
  type EndpointJson,
  type EndpointView,
} from './pages/webhooks.js';
import { idOf, page, type PagesDeps, seeOther, text } from './respond.js';

/** Webhooks: the endpoints, an endpoint's delivery log with replay, and a secret rotation shown once. */
export function webhookPages({ router, call, signedIn }: PagesDeps): void {
  const view = async (ctx: RouterContext, session: Session, extra: Partial<EndpointView> = {}) => {
    const id = idOf(ctx);
    const cursor = ctx.method === 'GET' ? text(ctx.query.cursor) : undefined;
    const [endpoint, deliveries] = await Promise.all([
      call(session.principal, 'GET', `/v1/webhooks/${id}`),
      call(session.principal, 'GET', `/v1/webhooks/${id}/deliveries`, { query: cursor ? { cursor } : {} }),
    ]);
    page(
      ctx,
      200,
      endpointPage(session, {
        endpoint: endpoint.body as EndpointJson,
        deliveries: deliveries.body as EndpointView['deliveries'],
        ...extra,
      }),
    );
  };

  router.get(
    '/webhooks',
    signedIn(async (ctx, session) => {
      const list = (await call(session.principal, 'GET', '/v1/webhooks')).body as { data: EndpointJson[] };
      page(ctx, 200, endpointListPage(session, list.data));
    }),
  );
  router.get(
    '/webhooks/:id',
    signedIn(async (ctx, session) =>
      view(ctx, session, text(ctx.query.replayed) ? { replayed: text(ctx.query.replayed)! } : {}),
    ),
  );
  router.post(
    '/webhooks/:id/replay',
    signedIn(async (ctx, session) => {
      const eventId = (ctx.state.form as URLSearchParams).get('event_id') ?? '';
      const d = (
        await call(session.principal, 'POST', `/v1/webhooks/${idOf(ctx)}/replay`, { body: { event_id: eventId } })
      ).body as DeliveryJson;
      seeOther(ctx, `${BASE}/webhooks/${idOf(ctx)}?replayed=${encodeURIComponent(d.event_id)}`);
    }),
  );
  router.post(
    '/webhooks/:id/rotate-secret',
    signedIn(async (ctx, session) => {
      // answered here, not redirected: the secret is in this response only (and it is never cached)
      const r = (await call(session.principal, 'POST', `/v1/webhooks/${idOf(ctx)}/rotate-secret`)).body as {
        secret: string;
        previous_secret_expires_at: string | null;
      };
      await view(ctx, session, { newSecret: { secret: r.secret, previousExpiresAt: r.previous_secret_expires_at } });
    }),
  );
}
