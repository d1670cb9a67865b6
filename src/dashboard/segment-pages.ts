import type { RouterContext } from '@koa/router';
import { ApiError } from '../lib/errors.js';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import { attempt, cursorOf, doneOf, form, listOf, mayManageContacts } from './contact-common.js';
import type { AudienceJson, ContactJson, PropertyJson, SegmentJson } from './pages/contact-shared.js';
import type { FormError } from './pages/form-errors.js';
import { BASE } from './pages/layout.js';
import {
  countPart,
  deleteSegmentPage,
  SEGMENT_FIELDS,
  segmentListPage,
  segmentPage,
  segmentValues,
  type CountState,
  type SegmentFormValues,
} from './pages/segments.js';
import { idOf, page, type PagesDeps, seeOther, deleteRoutes } from './respond.js';

const DONE: Record<string, (v: string) => string> = {
  deleted: (id) => `Segment ${id} is deleted.`,
};

const NEW_SEGMENT: SegmentFormValues = { name: '', audience_id: '', filter: '' };

/** Segments: the list, the filter editor with its count, a segment's contacts, deleting it. */
export function segmentPages(deps: PagesDeps): void {
  const v = views(deps);
  editorRoutes(deps, v);
  segmentRoutes(deps, v);
}

type Views = ReturnType<typeof views>;

function views({ call, services }: PagesDeps) {
  const segmentOf = async (session: Session, id: string) =>
    (await call(session.principal, 'GET', `/v1/segments/${id}`)).body as SegmentJson;
  const list = async (ctx: RouterContext, session: Session, values = NEW_SEGMENT, extra: ListExtra = {}) => {
    const [segments, audiences, properties] = await Promise.all([
      listOf<SegmentJson>(call, session, '/v1/segments', { cursor: cursorOf(ctx) }),
      listOf<AudienceJson>(call, session, '/v1/audiences', { limit: '100' }),
      listOf<PropertyJson>(call, session, '/v1/contact-properties'),
    ]);
    const view = { segments, audiences: audiences.data, properties: properties.data, form: values };
    const done = doneOf(ctx, DONE);
    page(
      ctx,
      extra.status ?? 200,
      segmentListPage(session, { ...view, count: extra.count ?? null, error: extra.error, done }),
    );
  };
  /** What the posted filter matches now, through the segments service (no /v1 route counts a filter not saved). */
  const count = async (session: Session, v: SegmentFormValues): Promise<CountState> => {
    mayManageContacts(session.principal);
    if (!v.filter) return null;
    try {
      const body = { filter: v.filter, ...(v.audience_id ? { audience_id: v.audience_id } : {}) };
      return await services.segments.count(session.principal.project.id, body);
    } catch (e) {
      if (e instanceof ApiError && e.status < 500) return { error: e.message };
      throw e;
    }
  };
  return { segmentOf, list, count };
}

const status = (c: CountState) => (c && 'error' in c ? 400 : 200);

/** The list and the editor: saving a segment, and its count (the whole page, or the part alone). */
function editorRoutes({ router, call, signedIn }: PagesDeps, { list, count }: Views): void {
  router.get('/segments', signedIn(list));
  router.post(
    '/segments',
    signedIn(async (ctx, session) => {
      const values = segmentValues(form(ctx));
      const body = {
        name: values.name,
        filter: values.filter,
        ...(values.audience_id ? { audience_id: values.audience_id } : {}),
      };
      const r = await attempt(SEGMENT_FIELDS, () => call(session.principal, 'POST', '/v1/segments', { body }));
      if (!r.ok) return list(ctx, session, values, { error: r.error, status: r.status });
      seeOther(ctx, `${BASE}/segments/${(r.value.body as SegmentJson).id}`);
    }),
  );
  // the Count button, without the script: the page again with the count
  router.post(
    '/segments/count',
    signedIn(async (ctx, session) => {
      const values = segmentValues(form(ctx));
      const c = await count(session, values);
      await list(ctx, session, values, { count: c, status: status(c) });
    }),
  );
  // the count alone, for the script that follows typing
  router.post(
    '/segments/count/part',
    signedIn(async (ctx, session) => {
      const c = await count(session, segmentValues(form(ctx)));
      page(ctx, status(c), countPart(c));
    }),
  );
}

/** A segment's page with who matches now, and its delete. */
function segmentRoutes({ router, call, signedIn }: PagesDeps, { segmentOf }: Views): void {
  router.get(
    '/segments/:id',
    signedIn(async (ctx, session) => {
      const s = await segmentOf(session, idOf(ctx));
      const [contacts, audience] = await Promise.all([
        listOf<ContactJson>(call, session, `/v1/segments/${idOf(ctx)}/contacts`, { cursor: cursorOf(ctx) }),
        s.audience_id
          ? call(session.principal, 'GET', `/v1/audiences/${encodeURIComponent(s.audience_id)}`).then(
              (r) => r.body as AudienceJson,
            )
          : null,
      ]);
      page(ctx, 200, segmentPage(session, { segment: s, audience, contacts }));
    }),
  );
  deleteRoutes({ router, call, signedIn }, '/segments', {
    read: (session, id) => segmentOf(session, id),
    confirm: deleteSegmentPage,
    after: (id) => `/segments?deleted=${id}`,
  });
}

interface ListExtra {
  count?: CountState;
  error?: FormError;
  status?: number;
}
