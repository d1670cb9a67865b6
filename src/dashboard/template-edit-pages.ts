import type { RouterContext } from '@koa/router';
import { ApiError, validationError } from '../lib/errors.js';
import { escapeHtml } from '../lib/html.js';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import type { FormError } from './pages/form-errors.js';
import { BASE } from './pages/layout.js';
import { PREVIEW_PATH, templateEditorPage, type EditorOptions } from './pages/template-editor.js';
import { templateUrl, type RenderedJson, type TemplateJson } from './pages/templates.js';
import { emailHtml, idOf, page, seeOther, text, type PagesDeps } from './respond.js';
import {
  applyOp,
  draftFromForm,
  draftFromVersion,
  inputOf,
  versionBody,
  type TemplateDraft,
} from './pages/template-draft.js';

// Paths of the editor that no template id can take (an id starts with a letter or a digit).
const NEW_SOURCE = `${BASE}/templates/+new`;
const NEW_DESIGN = `${BASE}/templates/+design`;

/** A path of ours as a route: path-to-regexp reserves `+`. */
const routeOf = (path: string) => path.slice(BASE.length).replace(/\+/g, '\\+');

/** A refusal the editor shows beside the input it is about (or above the form); anything else is the error page's. */
function refusal(e: unknown, d: TemplateDraft): FormError | null {
  if (!(e instanceof ApiError) || e.status >= 500 || e.code === 'unauthorized') return null;
  if (e.code === 'not_found' && e.field === undefined) return null;
  return { message: e.message, field: inputOf(d, e.field) };
}

/** The sample variables of the form, as a render takes them. */
function sampleVariables(d: TemplateDraft): Record<string, unknown> {
  if (!d.sample.trim()) return {};
  try {
    const v = JSON.parse(d.sample) as unknown;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // refused below
  }
  throw validationError('sample', 'give the sample variables as a JSON object');
}

/** What the preview frame shows when the draft cannot be rendered: the API's reason. */
const refusedPreview = (message: string) =>
  `<!doctype html><meta charset="utf-8"><title>Preview</title><body style="font:14px sans-serif;color:#9b1c1c;padding:16px"><p role="alert"><strong>The draft cannot be shown.</strong></p><p>${escapeHtml(message)}</p></body>`;

/**
 * The template editor: a new template (its source or a design), the next
 * version of one (started from a version it has), the buttons that change a
 * design without publishing it, Publish, and the draft's preview frame.
 */
export function templateEditPages(deps: PagesDeps): void {
  const { router, call, signedIn } = deps;
  const templateOf = async (session: Session, id: string) =>
    (await call(session.principal, 'GET', `/v1/templates/${id}`)).body as TemplateJson;

  /** The editor's buttons: a change to the design shows it again; Publish publishes and goes to the template. */
  const edit = async (ctx: RouterContext, session: Session, o: EditorOptions) => {
    const form = ctx.state.form as URLSearchParams;
    let d = draftFromForm(form);
    if (o.templateId) d = { ...d, id: o.templateId };
    const op = form.get('op') ?? 'publish';
    if (op !== 'publish')
      return page(ctx, 200, templateEditorPage(session, applyOp(d, op, form.get('add_type') ?? ''), o));
    try {
      if (!o.templateId && d.id) await refuseTaken(session, d.id);
      const body = { id: d.id, ...(d.name ? { name: d.name } : {}), ...versionBody(d) };
      const r = (await call(session.principal, 'POST', '/v1/templates', { body })).body as { version: number };
      seeOther(ctx, templateUrl(d.id, `?published=${r.version}`));
    } catch (e) {
      const error = refusal(e, d);
      if (!error) throw e;
      page(ctx, 400, templateEditorPage(session, d, { ...o, error }));
    }
  };

  /** A new template must not publish over one the project has under the id. */
  const refuseTaken = async (session: Session, id: string) => {
    const taken = await templateOf(session, encodeURIComponent(id)).catch((e: unknown) => {
      if (e instanceof ApiError && e.code === 'not_found') return null;
      throw e;
    });
    if (taken)
      throw new ApiError(
        409,
        'conflict',
        `id: template ${id} exists already: publish a new version from its page`,
        'id',
      );
  };

  for (const [path, mode] of [
    [NEW_SOURCE, 'source'],
    [NEW_DESIGN, 'design'],
  ] as const) {
    const route = routeOf(path);
    const o: EditorOptions = { action: path, templateName: null };
    router.get(
      route,
      signedIn(async (ctx, session) => page(ctx, 200, templateEditorPage(session, draftFromVersion(null, mode), o))),
    );
    router.post(
      route,
      signedIn(async (ctx, session) => edit(ctx, session, o)),
    );
  }

  versionEditor(deps, templateOf, edit);
  draftPreview(deps);
}

/** The draft rendered into the editor's frame, from the whole form. */
function draftPreview({ router, call, signedIn }: PagesDeps): void {
  router.post(
    routeOf(PREVIEW_PATH),
    signedIn(async (ctx, session) => {
      const d = draftFromForm(ctx.state.form as URLSearchParams);
      try {
        // a draft without its subject yet still shows its body
        const body = {
          template: { ...versionBody(d), subject: d.subject || '(no subject)' },
          variables: sampleVariables(d),
        };
        const r = (await call(session.principal, 'POST', '/v1/templates/render', { body })).body as RenderedJson;
        emailHtml(ctx, r.html ?? `<!doctype html><meta charset="utf-8"><pre>${escapeHtml(r.text ?? '')}</pre>`);
      } catch (e) {
        if (!(e instanceof ApiError) || e.status >= 500 || e.code === 'unauthorized') throw e;
        emailHtml(ctx, refusedPreview(e.message));
      }
    }),
  );
}

/** The next version of a template, started from one of its versions (`?from=`), as HTML or a design (`?mode=`). */
function versionEditor(
  { router, signedIn }: PagesDeps,
  templateOf: (session: Session, id: string) => Promise<TemplateJson>,
  edit: (ctx: RouterContext, session: Session, o: EditorOptions) => Promise<void>,
): void {
  router.get(
    '/templates/:id/edit',
    signedIn(async (ctx, session) => {
      const t = await templateOf(session, idOf(ctx));
      const from = Number(text(ctx.query.from) ?? t.latest_version);
      const v = t.versions.find((x) => x.version === from) ?? t.versions[0];
      const asked = text(ctx.query.mode);
      const mode = asked === 'design' || asked === 'source' ? asked : v.design ? 'design' : 'source';
      const d = draftFromVersion(
        mode === (v.design ? 'design' : 'source') ? v : { ...v, html: null, design: null },
        mode,
        t.id,
      );
      page(ctx, 200, templateEditorPage(session, d, editorOf(t)));
    }),
  );
  router.post(
    '/templates/:id/edit',
    signedIn(async (ctx, session) => edit(ctx, session, editorOf(await templateOf(session, idOf(ctx))))),
  );
}

const editorOf = (t: TemplateJson): EditorOptions => ({
  action: templateUrl(t.id, '/edit'),
  templateName: t.name,
  templateId: t.id,
});
