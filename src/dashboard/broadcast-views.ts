import type { RouterContext } from '@koa/router';
import { ApiError } from '../lib/errors.js';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import type { BroadcastChoices, BroadcastFormValues } from './pages/broadcast-form.js';
import { broadcastPage, type BroadcastView, type ContactChoice } from './pages/broadcast-detail.js';
import { composePage } from './pages/broadcasts.js';
import type { BroadcastJson } from './pages/broadcast-form.js';
import type { FormError } from './pages/form-errors.js';
import { idOf, page, type PagesDeps } from './respond.js';

// What the broadcast routes answer with (broadcast-pages.ts, broadcast-actions.ts), read through
// the API as the signed-in key, and how a refusal of the API is shown on a form.

/** A refusal the form can show beside a field (or above it); anything else is the error page's. */
export function refusal(e: unknown, fieldOf: (f: string | undefined) => string | null): FormError | null {
  if (!(e instanceof ApiError) || e.status >= 500 || e.code === 'unauthorized') return null;
  if (e.code === 'not_found' && !e.message.match(/^(audience|segment|topic|contact) /)) return null;
  return { message: e.message, field: fieldOf(e.field) ?? fieldByMessage(e.message) };
}

/** A 404 about what the form named (its audience, segment, topic or contact) belongs beside that field. */
function fieldByMessage(message: string): string | null {
  const what = /^(audience|segment|topic|contact) /.exec(message)?.[1];
  return what === 'audience' || what === 'segment' ? 'target' : what ? `${what}_id` : null;
}

export type BroadcastViews = ReturnType<typeof broadcastViews>;

/** The pages the routes answer with, read through the API as the signed-in key. */
export function broadcastViews({ call }: PagesDeps) {
  const get = async <T>(session: Session, path: string, query: Record<string, string> = {}): Promise<T[]> => {
    try {
      return ((await call(session.principal, 'GET', path, { query })).body as { data: T[] }).data;
    } catch (e) {
      // a key without the scope of a list (or a target deleted since) offers nothing to choose from
      if (e instanceof ApiError && (e.code === 'forbidden' || e.code === 'not_found')) return [];
      throw e;
    }
  };
  const choices = async (session: Session): Promise<BroadcastChoices> => {
    const hundred = { limit: '100' };
    const [templates, audiences, segments, topics] = await Promise.all([
      get<BroadcastChoices['templates'][number]>(session, '/v1/templates'),
      get<BroadcastChoices['audiences'][number]>(session, '/v1/audiences', hundred),
      get<BroadcastChoices['segments'][number]>(session, '/v1/segments', hundred),
      get<BroadcastChoices['topics'][number]>(session, '/v1/topics', hundred),
    ]);
    return { templates, audiences, segments, topics };
  };
  const broadcastOf = async (session: Session, id: string) =>
    (await call(session.principal, 'GET', `/v1/broadcasts/${id}`)).body as BroadcastJson;
  const contactsOf = (session: Session, b: BroadcastJson): Promise<ContactChoice[]> =>
    b.segment_id
      ? get(session, `/v1/segments/${encodeURIComponent(b.segment_id)}/contacts`, { limit: '100' })
      : b.audience_id
        ? get(session, '/v1/contacts', { audience_id: b.audience_id, limit: '100' })
        : Promise.resolve([]);
  const show = async (ctx: RouterContext, session: Session, extra: Partial<BroadcastView> = {}, status = 200) => {
    const broadcast = await broadcastOf(session, idOf(ctx));
    const [c, contacts] = await Promise.all([choices(session), contactsOf(session, broadcast)]);
    page(ctx, status, broadcastPage(session, { broadcast, choices: c, contacts, ...extra }));
  };
  const compose = async (
    ctx: RouterContext,
    session: Session,
    values: BroadcastFormValues,
    o: { error?: FormError; status?: number; draft?: BroadcastJson } = {},
  ) => page(ctx, o.status ?? 200, composePage(session, { values, choices: await choices(session), ...o }));
  return { choices, broadcastOf, contactsOf, show, compose };
}
