import type { RouterContext } from '@koa/router';
import { ApiError } from '../lib/errors.js';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import { refusal, type BroadcastViews } from './broadcast-views.js';
import { previewPart, type PreviewJson } from './pages/broadcast-detail.js';
import { reportPage, reportPart, type ReportJson } from './pages/broadcast-report.js';
import { broadcastUrl } from './pages/broadcasts.js';
import { emailHtml, idOf, page, seeOther, text, type PagesDeps } from './respond.js';

const form = (ctx: RouterContext) => ctx.state.form as URLSearchParams;
const status = (e: unknown) => (e as ApiError).status;

/** `2026-12-01T09:30` from a datetime-local field, read as UTC (the label says so); anything else goes to the API as it is, to be refused there. */
export function utcOf(local: string): string {
  return /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?$/.test(local) ? `${local.length === 16 ? `${local}:00` : local}Z` : local;
}

/**
 * The actions of a broadcast's page, each a form post over the /v1 route
 * that does it: preview for a contact, send a test, send now or at a time,
 * cancel; and its report.
 */
export function broadcastActions(deps: PagesDeps, v: BroadcastViews): void {
  previewRoutes(deps, v);
  sendRoutes(deps, v);
  reportRoutes(deps, v);
}

function previewRoutes({ router, call, signedIn }: PagesDeps, v: BroadcastViews): void {
  const preview = async (ctx: RouterContext, session: Session, contactId: string) => {
    try {
      const r = await call(session.principal, 'POST', `/v1/broadcasts/${idOf(ctx)}/preview`, {
        body: { contact_id: contactId },
      });
      return { contactId, result: r.body as PreviewJson };
    } catch (e) {
      const error = refusal(e, (f) => (f === 'contact_id' ? 'contact_id' : null));
      if (!error) throw e;
      return { contactId, error, status: status(e) };
    }
  };
  router.post(
    '/broadcasts/:id/preview',
    signedIn(async (ctx, session) => {
      const p = await preview(ctx, session, form(ctx).get('contact_id') ?? '');
      await v.show(ctx, session, { preview: p }, p.status ?? 200);
    }),
  );
  // the result alone, for the script that previews as the contact is chosen
  router.post(
    '/broadcasts/:id/preview/part',
    signedIn(async (ctx, session) => {
      const p = await preview(ctx, session, form(ctx).get('contact_id') ?? '');
      page(ctx, p.error ? 400 : 200, previewPart(await v.broadcastOf(session, idOf(ctx)), p));
    }),
  );
  // a reload of the preview's address after the form was posted
  router.get('/broadcasts/:id/preview', async (ctx) => seeOther(ctx, broadcastUrl(ctx.params.id)));
  router.get(
    '/broadcasts/:id/preview/html',
    signedIn(async (ctx, session) => {
      const r = await call(session.principal, 'POST', `/v1/broadcasts/${idOf(ctx)}/preview`, {
        body: { contact_id: text(ctx.query.contact_id) ?? '' },
      });
      emailHtml(ctx, (r.body as PreviewJson).html);
    }),
  );
}

function sendRoutes({ router, call, signedIn }: PagesDeps, v: BroadcastViews): void {
  router.post(
    '/broadcasts/:id/test',
    signedIn(async (ctx, session) => {
      const to = form(ctx).get('to')?.trim() ?? '';
      const contactId = form(ctx).get('contact_id') ?? '';
      try {
        const body = { to, ...(contactId ? { contact_id: contactId } : {}) };
        const sent = await call(session.principal, 'POST', `/v1/broadcasts/${idOf(ctx)}/test`, { body });
        seeOther(
          ctx,
          broadcastUrl(ctx.params.id, `?done=tested&id=${encodeURIComponent((sent.body as { id: string }).id)}`),
        );
      } catch (e) {
        const error = refusal(e, (f) => (f === 'to' || f === 'contact_id' ? f : null));
        if (!error) throw e;
        await v.show(ctx, session, { test: { to, contactId, error } }, status(e));
      }
    }),
  );
  router.post(
    '/broadcasts/:id/send',
    signedIn(async (ctx, session) => {
      const at = form(ctx).get('scheduled_at');
      try {
        const body = at === null ? {} : { scheduled_at: utcOf(at.trim()) };
        await call(session.principal, 'POST', `/v1/broadcasts/${idOf(ctx)}/send`, { body });
        seeOther(ctx, broadcastUrl(ctx.params.id, `?done=${at === null ? 'sent' : 'scheduled'}`));
      } catch (e) {
        const error = refusal(e, (f) => (f === 'scheduled_at' ? f : null));
        if (!error) throw e;
        await v.show(ctx, session, { schedule: { at: at ?? '', error } }, status(e));
      }
    }),
  );
  router.post(
    '/broadcasts/:id/cancel',
    signedIn(async (ctx, session) => {
      await call(session.principal, 'POST', `/v1/broadcasts/${idOf(ctx)}/cancel`);
      seeOther(ctx, broadcastUrl(ctx.params.id, '?done=cancelled'));
    }),
  );
}

function reportRoutes({ router, call, signedIn }: PagesDeps, v: BroadcastViews): void {
  const reportOf = async (session: Session, id: string) =>
    (await call(session.principal, 'GET', `/v1/broadcasts/${id}/report`)).body as ReportJson;
  router.get(
    '/broadcasts/:id/report',
    signedIn(async (ctx, session) => {
      const [b, r] = await Promise.all([v.broadcastOf(session, idOf(ctx)), reportOf(session, idOf(ctx))]);
      page(ctx, 200, reportPage(session, b, r));
    }),
  );
  router.get(
    '/broadcasts/:id/report/state',
    signedIn(async (ctx, session) => {
      const [b, r] = await Promise.all([v.broadcastOf(session, idOf(ctx)), reportOf(session, idOf(ctx))]);
      page(ctx, 200, reportPart(b, r));
    }),
  );
}
