import type { RouteCaller } from '../api/route-caller.js';
import { ApiError, notFound, validationError } from '../lib/errors.js';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import { templatePage } from './pages/template-detail.js';
import { previewResult, previewVariables, type PreviewState } from './pages/template-preview.js';
import {
  templateListPage,
  templateUrl,
  type RenderedJson,
  type TemplateJson,
  type TemplateSummaryJson,
  type VersionJson,
} from './pages/templates.js';
import { templateActionPages } from './template-action-pages.js';
import { templateEditPages } from './template-edit-pages.js';
import { emailHtml, page, seeOther, text, type PagesDeps } from './respond.js';

const apiPath = (id: string, rest = '') => `/v1/templates/${encodeURIComponent(id)}${rest}`;

/** A version number as written in a query or a form: digits only, else none. */
const versionNumber = (raw: string | null | undefined): number | undefined =>
  raw && /^[1-9][0-9]{0,15}$/.test(raw) ? Number(raw) : undefined;

/**
 * Templates: the list, a template with its versions, the source of one and
 * its preview (rendered by POST /v1/templates/{id}/render; a refused render
 * is shown beside the form), the preview's HTML, and restoring a version.
 */
export function templatePages(deps: PagesDeps): void {
  const { router, call, signedIn } = deps;
  // first: the editor's paths (/templates/+new…) would otherwise be read as a template's id
  templateEditPages(deps);
  router.get(
    '/templates',
    signedIn(async (ctx, session) => {
      const list = (await call(session.principal, 'GET', '/v1/templates')).body as { data: TemplateSummaryJson[] };
      page(ctx, 200, templateListPage(session, list.data, text(ctx.query.done)));
    }),
  );
  router.get(
    '/templates/:id',
    signedIn(async (ctx, session) => {
      const t = await templateOf(call, session, ctx.params.id);
      const version = versionOf(t, text(ctx.query.version));
      page(
        ctx,
        200,
        templatePage(session, t, {
          version,
          restored: versionNumber(text(ctx.query.restored)),
          published: versionNumber(text(ctx.query.published)),
          done: text(ctx.query.done),
        }),
      );
    }),
  );
  previewPages({ router, call, signedIn });
  templateActionPages(deps);
  router.post(
    '/templates/:id/restore',
    signedIn(async (ctx, session) => {
      const raw = (ctx.state.form as URLSearchParams).get('version') ?? '';
      const body = { version: versionNumber(raw) ?? raw };
      const restored = (await call(session.principal, 'POST', apiPath(ctx.params.id, '/restore'), { body })).body as {
        version: number;
      };
      seeOther(ctx, templateUrl(ctx.params.id, `?restored=${restored.version}`));
    }),
  );
}

/** The preview of a version: the form posted (the page again, or only its result), and the HTML rendered for its frame. */
function previewPages({ router, call, signedIn }: Pick<PagesDeps, 'router' | 'call' | 'signedIn'>): void {
  router.post(
    '/templates/:id/preview',
    signedIn(async (ctx, session) => {
      const t = await templateOf(call, session, ctx.params.id);
      const { version, preview } = await render(call, session, t, ctx.state.form as URLSearchParams);
      page(ctx, preview.error ? 400 : 200, templatePage(session, t, { version, preview }));
    }),
  );
  // the result part alone, for a script that previews as the form is typed in
  router.post(
    '/templates/:id/preview/part',
    signedIn(async (ctx, session) => {
      const t = await templateOf(call, session, ctx.params.id);
      const { preview } = await render(call, session, t, ctx.state.form as URLSearchParams);
      page(ctx, preview.error ? 400 : 200, previewResult(t, preview));
    }),
  );
  // a reload of the preview's address after the form was posted
  router.get('/templates/:id/preview', async (ctx) => seeOther(ctx, templateUrl(ctx.params.id)));
  router.get(
    '/templates/:id/preview/html',
    signedIn(async (ctx, session) => {
      const body = {
        version: versionNumber(text(ctx.query.version)),
        language: text(ctx.query.language),
        variables: jsonObject(text(ctx.query.variables)),
      };
      const rendered = (
        await call(session.principal, 'POST', apiPath(ctx.params.id, '/render'), { body: withoutUndefined(body) })
      ).body as RenderedJson;
      emailHtml(ctx, rendered.html);
    }),
  );
}

async function templateOf(call: RouteCaller, session: Session, id: string): Promise<TemplateJson> {
  return (await call(session.principal, 'GET', apiPath(id))).body as TemplateJson;
}

/** The version asked for (the latest when none is): one the template does not have is a 404, as GET …/versions/{version} answers. */
function versionOf(t: TemplateJson, raw: string | undefined): VersionJson {
  const n = raw === undefined ? t.latest_version : versionNumber(raw);
  const v = t.versions.find((x) => x.version === n);
  if (!v) throw notFound(`version ${raw ?? n}`);
  return v;
}

/** The posted preview form rendered through the API; a render it refuses (invalid variables, a bad language tag) is kept for the page to show. */
async function render(
  call: RouteCaller,
  session: Session,
  t: TemplateJson,
  form: URLSearchParams,
): Promise<{ version: VersionJson; preview: PreviewState }> {
  const version = versionOf(t, text(form.get('version')));
  const language = form.get('language')?.trim() ?? '';
  const { values, variables, error } = previewVariables(form, version.variables);
  const preview: PreviewState = { values, language, variables };
  if (error) return { version, preview: { ...preview, error } };
  try {
    const body = withoutUndefined({ version: version.version, language: language || undefined, variables });
    preview.result = (await call(session.principal, 'POST', apiPath(t.id, '/render'), { body })).body as RenderedJson;
  } catch (e) {
    if (!(e instanceof ApiError) || (e.code !== 'invalid_variables' && e.code !== 'validation_error')) throw e;
    preview.error = { code: e.code, field: e.field, message: e.message };
  }
  return { version, preview };
}

function jsonObject(raw: string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  try {
    const v = JSON.parse(raw) as unknown;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // refused below
  }
  throw validationError('variables', 'give the variables as a JSON object');
}

const withoutUndefined = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
