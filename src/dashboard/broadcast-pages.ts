import type { RouterContext } from '@koa/router';
import { ApiError } from '../lib/errors.js';
import { broadcastActions } from './broadcast-actions.js';
import { broadcastViews, refusal, type BroadcastViews } from './broadcast-views.js';
import { html, type Html } from './pages/html.js';
import { BASE } from './pages/layout.js';
import { broadcastBody, broadcastFieldOf, broadcastValues, EMPTY_BROADCAST, valuesOf } from './pages/broadcast-form.js';
import { countsPart } from './pages/broadcast-detail.js';
import { broadcastListPage, broadcastUrl, deleteBroadcastPage } from './pages/broadcasts.js';
import type { BroadcastJson } from './pages/broadcast-form.js';
import { idOf, page, seeOther, text, type PagesDeps, deleteRoutes } from './respond.js';

/** What each ?done= of a redirect after an action says on the broadcast's page. */
const DONE: Record<string, (v: string) => Html> = {
  created: () => html`Draft created. Preview it for a contact, send a test, then send or schedule it.`,
  saved: () => html`Draft saved.`,
  sent: () => html`Sending: the counts below refresh as the emails go out.`,
  scheduled: () => html`Scheduled: it starts at the time above, unless you cancel it.`,
  cancelled: () => html`Cancelled: the contacts not reached yet get nothing.`,
  tested: (id) => html`Test email sent: <a href="${BASE}/emails/${encodeURIComponent(id)}">see it in Emails</a>.`,
};

/**
 * Broadcasts: the list, compose (a draft), a broadcast's page with its
 * counts, edit and delete a draft; the actions (preview, test, send,
 * schedule, cancel, report) are in broadcast-actions.ts.
 */
export function broadcastPages(deps: PagesDeps): void {
  const v = broadcastViews(deps);
  draftRoutes(deps, v);
  broadcastRoutes(deps, v);
  broadcastActions(deps, v);
}

const form = (ctx: RouterContext) => ctx.state.form as URLSearchParams;

/** The list, and composing a new draft. */
function draftRoutes({ router, call, signedIn }: PagesDeps, v: BroadcastViews): void {
  router.get(
    '/broadcasts',
    signedIn(async (ctx, session) => {
      const cursor = text(ctx.query.cursor);
      const [list, c] = await Promise.all([
        call(session.principal, 'GET', '/v1/broadcasts', { query: cursor ? { cursor } : {} }),
        v.choices(session),
      ]);
      const { data, next_cursor } = list.body as { data: BroadcastJson[]; next_cursor: string | null };
      const deleted = text(ctx.query.deleted);
      page(ctx, 200, broadcastListPage(session, { broadcasts: data, nextCursor: next_cursor, choices: c, deleted }));
    }),
  );
  router.get(
    '/broadcasts/new',
    signedIn(async (ctx, session) => v.compose(ctx, session, EMPTY_BROADCAST)),
  );
  router.post(
    '/broadcasts',
    signedIn(async (ctx, session) => {
      const values = broadcastValues(form(ctx));
      try {
        const made = await call(session.principal, 'POST', '/v1/broadcasts', { body: broadcastBody(values, true) });
        seeOther(ctx, broadcastUrl((made.body as BroadcastJson).id, '?done=created'));
      } catch (e) {
        const error = refusal(e, broadcastFieldOf);
        if (!error) throw e;
        await v.compose(ctx, session, values, { error, status: (e as ApiError).status });
      }
    }),
  );
}

/** A broadcast's page, its counts alone, and a draft's edit and delete. */
function broadcastRoutes({ router, call, signedIn }: PagesDeps, v: BroadcastViews): void {
  router.get(
    '/broadcasts/:id',
    signedIn(async (ctx, session) => {
      const [kind, value] = [text(ctx.query.done), text(ctx.query.id) ?? ''];
      await v.show(ctx, session, kind && kind in DONE ? { done: DONE[kind](value) } : {});
    }),
  );
  // the counts alone, for the part of the page that refreshes while it sends
  router.get(
    '/broadcasts/:id/state',
    signedIn(async (ctx, session) => page(ctx, 200, countsPart(await v.broadcastOf(session, idOf(ctx))))),
  );
  router.get(
    '/broadcasts/:id/edit',
    signedIn(async (ctx, session) => {
      const draft = await v.broadcastOf(session, idOf(ctx));
      if (draft.status !== 'draft') return seeOther(ctx, broadcastUrl(draft.id));
      await v.compose(ctx, session, valuesOf(draft), { draft });
    }),
  );
  router.post(
    '/broadcasts/:id/edit',
    signedIn(async (ctx, session) => {
      const values = broadcastValues(form(ctx));
      try {
        const body = broadcastBody(values, false);
        await call(session.principal, 'PATCH', `/v1/broadcasts/${idOf(ctx)}`, { body });
        seeOther(ctx, broadcastUrl(ctx.params.id, '?done=saved'));
      } catch (e) {
        const error = refusal(e, broadcastFieldOf);
        if (!error) throw e;
        const draft = await v.broadcastOf(session, idOf(ctx));
        await v.compose(ctx, session, values, { error, status: (e as ApiError).status, draft });
      }
    }),
  );
  deleteRoutes({ router, call, signedIn }, '/broadcasts', {
    read: (session, id) => v.broadcastOf(session, id),
    confirm: deleteBroadcastPage,
    after: (id) => `/broadcasts?deleted=${id}`,
  });
}
