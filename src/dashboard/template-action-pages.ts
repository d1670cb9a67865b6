import type { RouterContext } from '@koa/router';
import { ApiError } from '../lib/errors.js';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import { formFieldOf, type FormError } from './pages/form-errors.js';
import { BASE } from './pages/layout.js';
import { deleteTemplatePage, type ActionsState, type TestSendValues } from './pages/template-actions.js';
import { templatePage } from './pages/template-detail.js';
import { templateUrl, type TemplateJson } from './pages/templates.js';
import { idOf, page, seeOther, type PagesDeps, deleteRoutes } from './respond.js';

const TEST_FIELDS = ['from', 'to', 'template_version', 'language', 'variables'] as const;

/** An API refusal for a form on the template's page; anything else is the error page's. */
function refused(e: unknown, fields: readonly string[]): FormError | null {
  if (!(e instanceof ApiError) || e.status >= 500 || e.code === 'unauthorized' || e.code === 'not_found') return null;
  return { message: e.message, field: formFieldOf(e.field, fields) };
}

/** The split form's rows as the API's split; a blank row is left out, a percent as typed is refused by the API. */
function splitOf(form: URLSearchParams) {
  const rows = Array.from({ length: 5 }, (_, i) => ({
    version: (form.get(`version${i}`) ?? '').trim(),
    percent: (form.get(`percent${i}`) ?? '').trim(),
  }));
  const split = rows
    .filter((r) => r.version || r.percent)
    .map((r) => ({
      version: /^[0-9]{1,15}$/.test(r.version) ? Number(r.version) : r.version,
      percent: /^[0-9]{1,3}$/.test(r.percent) ? Number(r.percent) : r.percent,
    }));
  return { rows, split };
}

/** The test form as POST /v1/emails takes it; variables that are not a JSON object go as typed, to be refused. */
function testSendOf(id: string, v: TestSendValues) {
  let variables: unknown = v.variables;
  try {
    variables = v.variables.trim() ? JSON.parse(v.variables) : {};
  } catch {
    // sent as typed: the API names the field
  }
  return {
    from: v.from,
    to: [v.to],
    template_id: id,
    template_version: Number(v.version),
    variables,
    ...(v.language ? { language: v.language } : {}),
    tags: { dashboard: 'template-test' },
  };
}

/** A template's split, its test send and its deletion. */
export function templateActionPages({ router, call, signedIn }: PagesDeps): void {
  const templateOf = async (session: Session, id: string) =>
    (await call(session.principal, 'GET', `/v1/templates/${id}`)).body as TemplateJson;
  const again = async (ctx: RouterContext, session: Session, actions: ActionsState) => {
    const t = await templateOf(session, idOf(ctx));
    page(ctx, 400, templatePage(session, t, { version: t.versions[0], actions }));
  };

  router.post(
    '/templates/:id/split',
    signedIn(async (ctx, session) => {
      const form = ctx.state.form as URLSearchParams;
      const { rows, split } = splitOf(form);
      const body = { split: form.get('op') === 'off' ? null : split };
      try {
        await call(session.principal, 'PATCH', `/v1/templates/${idOf(ctx)}`, { body });
        seeOther(ctx, templateUrl(ctx.params.id, `?done=${body.split ? 'split' : 'split-off'}`));
      } catch (e) {
        const error = refused(e, ['split']);
        if (!error) throw e;
        await again(ctx, session, { split: { error, rows } });
      }
    }),
  );
  router.post(
    '/templates/:id/test',
    signedIn(async (ctx, session) => {
      const form = ctx.state.form as URLSearchParams;
      const get = (k: string) => (form.get(k) ?? '').trim();
      const values: TestSendValues = {
        from: get('from'),
        to: get('to'),
        version: get('template_version'),
        language: get('language'),
        variables: form.get('variables') ?? '',
      };
      try {
        const body = testSendOf(ctx.params.id, values);
        const sent = (await call(session.principal, 'POST', '/v1/emails', { body })).body as { id: string };
        seeOther(ctx, `${BASE}/emails/${encodeURIComponent(sent.id)}`);
      } catch (e) {
        const error = refused(e, TEST_FIELDS);
        if (!error) throw e;
        await again(ctx, session, { test: { values, error } });
      }
    }),
  );
  deleteRoutes({ router, call, signedIn }, '/templates', {
    read: (session, id) => templateOf(session, id),
    confirm: deleteTemplatePage,
    after: () => '/templates?done=deleted',
  });
}
