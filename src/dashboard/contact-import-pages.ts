import type { RouterContext } from '@koa/router';
import { ApiError } from '../lib/errors.js';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import { form, listOf, mayManageContacts } from './contact-common.js';
import { importJobs } from './contact-import-jobs.js';
import { importFormPage, importPage, importProgress } from './pages/contact-import.js';
import type { AudienceJson, PropertyJson } from './pages/contact-shared.js';
import type { FormError } from './pages/form-errors.js';
import { BASE } from './pages/layout.js';
import { page, type PagesDeps, seeOther, text } from './respond.js';

type Jobs = ReturnType<typeof importJobs>;

/**
 * The CSV import of contacts and their export, run by the code of `posthorn contacts import` and
 * `export` (no /v1 route takes a file), with the check the contacts routes make. An import is checked
 * before the answer (a file that cannot be imported is refused beside its field), then stored while
 * its progress page refreshes.
 */
export function contactImportPages(deps: PagesDeps): void {
  const jobs = importJobs((prepared, progress) => deps.services.contactImport.run(prepared, progress));
  importRoutes(deps, jobs);
  exportRoute(deps);
}

function importRoutes({ router, call, signedIn, services }: PagesDeps, jobs: Jobs): void {
  const formPage = async (
    ctx: RouterContext,
    session: Session,
    audienceId: string,
    error?: FormError,
    status = 200,
  ) => {
    const [audiences, properties] = await Promise.all([
      listOf<AudienceJson>(call, session, '/v1/audiences', { limit: '100' }),
      listOf<PropertyJson>(call, session, '/v1/contact-properties'),
    ]);
    const view = { audiences: audiences.data, properties: properties.data, audienceId, recent: jobs.recent(session) };
    page(ctx, status, importFormPage(session, { ...view, error }));
  };
  router.get(
    '/contacts/import',
    signedIn(async (ctx, session) => formPage(ctx, session, text(ctx.query.audience_id) ?? '')),
  );
  router.post(
    '/contacts/import',
    signedIn(async (ctx, session) => {
      mayManageContacts(session.principal);
      const audienceId = form(ctx).get('audience_id') || null;
      const refused = (error: FormError, status: number) => formPage(ctx, session, audienceId ?? '', error, status);
      const file = (ctx.state.files as Map<string, { name: string; bytes: Buffer }>).get('file');
      if (!file || !file.bytes.length) return refused({ field: 'file', message: 'choose a CSV file to import' }, 400);
      let prepared;
      try {
        const csv = file.bytes.toString('utf8');
        prepared = await services.contactImport.prepare(session.principal.project.id, csv, audienceId);
      } catch (e) {
        if (!(e instanceof ApiError) || e.status >= 500) throw e;
        const field = e.code === 'not_found' ? 'audience_id' : e.field === 'file' ? 'file' : null;
        return refused({ field, message: e.message }, e.status);
      }
      const audience = audienceId
        ? ((await call(session.principal, 'GET', `/v1/audiences/${encodeURIComponent(audienceId)}`))
            .body as AudienceJson)
        : null;
      const id = jobs.start(
        session,
        prepared,
        file.name || 'contacts.csv',
        audience && { id: audience.id, name: audience.name },
      );
      seeOther(ctx, `${BASE}/contacts/imports/${id}`);
    }),
  );
  router.get(
    '/contacts/imports/:id',
    signedIn(async (ctx, session) => page(ctx, 200, importPage(session, jobs.of(session, ctx.params.id)))),
  );
  // the progress part alone, which the page's script fetches until it is final
  router.get(
    '/contacts/imports/:id/state',
    signedIn(async (ctx, session) => page(ctx, 200, importProgress(jobs.of(session, ctx.params.id)))),
  );
}

/**
 * The contacts as a CSV download, in the CLI export's columns. Built in memory before it is sent: fine
 * for the hundreds of thousands of contacts a project of this appliance holds (the CLI streams).
 */
function exportRoute({ router, signedIn, services }: PagesDeps): void {
  router.get(
    '/contacts/export.csv',
    signedIn(async (ctx, session) => {
      mayManageContacts(session.principal);
      const audienceId = text(ctx.query.audience_id) ?? null;
      const chunks: string[] = [];
      await services.contactImport.export(session.principal.project.id, audienceId, (c) => chunks.push(c));
      const name = audienceId ? `contacts-${audienceId.replace(/[^A-Za-z0-9_]/g, '')}` : 'contacts';
      ctx.type = 'text/csv; charset=utf-8';
      ctx.set('Content-Disposition', `attachment; filename="${name}.csv"`);
      ctx.body = chunks.join('');
    }),
  );
}
