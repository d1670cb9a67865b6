import type { RouterContext } from '@koa/router';
import { ApiError } from '../lib/errors.js';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import type { InsightsJson } from './pages/domain-insights.js';
import {
  DOMAIN_FIELDS,
  deleteDomainPage,
  domainListPage,
  domainPage,
  type DomainJson,
  type DomainView,
  type NewDomainForm,
} from './pages/domains.js';
import { formFieldOf, type FormError } from './pages/form-errors.js';
import { BASE } from './pages/layout.js';
import { idOf, page, type PagesDeps, seeOther, text } from './respond.js';

const NEW_DOMAIN: NewDomainForm = {
  domain: '',
  custom_return_path: '',
  open_tracking: false,
  click_tracking: false,
  tls: 'opportunistic',
};

/** What each ?done= of a redirect after an action says on the domain's page. */
const DONE: Record<string, string> = {
  added: 'Domain added. Publish the required records below at your DNS provider, then press Verify now.',
  verified: 'Checked DNS again just now: each record shows what was found.',
  saved: 'Settings saved.',
};

/** A refusal the form can show beside a field (or above it); anything else is the error page's. */
function refusal(e: unknown): FormError | null {
  if (!(e instanceof ApiError) || e.status >= 500 || e.code === 'not_found' || e.code === 'unauthorized') return null;
  return { message: e.message, field: formFieldOf(e.field, DOMAIN_FIELDS) };
}

/** The settings of a posted form; an unticked checkbox is absent from it, so absent means off. */
function settingsOf(f: URLSearchParams): Omit<NewDomainForm, 'domain'> {
  return {
    open_tracking: f.get('open_tracking') === 'true',
    click_tracking: f.get('click_tracking') === 'true',
    tls: f.get('tls') ?? 'opportunistic',
    custom_return_path: f.get('custom_return_path')?.trim() ?? '',
  };
}

/** The API's body for settings: a blank return path leaves it as it is. */
function settingsBody({ custom_return_path, ...rest }: Omit<NewDomainForm, 'domain'>) {
  return { ...rest, ...(custom_return_path ? { custom_return_path } : {}) };
}

/**
 * Domains: the list and a form that adds one, a domain with its records, settings and insights; verify now,
 * save settings, delete after a confirmation that says live sends stop.
 */
export function domainPages(deps: PagesDeps): void {
  const v = views(deps);
  listRoutes(deps, v);
  domainRoutes(deps, v);
}

type Views = ReturnType<typeof views>;

/** The pages the routes answer with, read through the API as the signed-in key. */
function views({ call }: PagesDeps) {
  const list = async (ctx: RouterContext, session: Session, form = NEW_DOMAIN, error?: FormError, status = 200) => {
    const domains = ((await call(session.principal, 'GET', '/v1/domains')).body as { data: DomainJson[] }).data;
    const deleted = ctx.method === 'GET' ? text(ctx.query.deleted) : undefined;
    page(ctx, status, domainListPage(session, { domains, form, error, deleted }));
  };
  const show = async (ctx: RouterContext, session: Session, v: DomainView = {}, status = 200) => {
    const id = idOf(ctx);
    const [d, insights] = await Promise.all([
      call(session.principal, 'GET', `/v1/domains/${id}`),
      call(session.principal, 'GET', `/v1/domains/${id}/insights`),
    ]);
    page(ctx, status, domainPage(session, d.body as DomainJson, insights.body as InsightsJson, v));
  };
  const domainOf = async (ctx: RouterContext, session: Session) =>
    (await call(session.principal, 'GET', `/v1/domains/${idOf(ctx)}`)).body as DomainJson;
  return { list, show, domainOf };
}

const form = (ctx: RouterContext) => ctx.state.form as URLSearchParams;

/** The list and adding a domain. */
function listRoutes({ router, call, signedIn }: PagesDeps, v: Views): void {
  router.get(
    '/domains',
    signedIn(async (ctx, session) => v.list(ctx, session)),
  );
  router.post(
    '/domains',
    signedIn(async (ctx, session) => {
      const values = { domain: form(ctx).get('domain')?.trim() ?? '', ...settingsOf(form(ctx)) };
      let created: DomainJson;
      try {
        const body = { domain: values.domain, ...settingsBody(values) };
        created = (await call(session.principal, 'POST', '/v1/domains', { body })).body as DomainJson;
      } catch (e) {
        const r = refusal(e);
        if (!r) throw e;
        return v.list(ctx, session, values, r, (e as ApiError).status);
      }
      seeOther(ctx, `${BASE}/domains/${encodeURIComponent(created.id)}?done=added`);
    }),
  );
}

/** A domain's page: verify now, its settings, delete after a confirmation. */
function domainRoutes({ router, call, signedIn }: PagesDeps, v: Views): void {
  router.get(
    '/domains/:id',
    signedIn(async (ctx, session) => {
      const done = text(ctx.query.done);
      await v.show(ctx, session, done && done in DONE ? { done: DONE[done] } : {});
    }),
  );
  router.post(
    '/domains/:id/verify',
    signedIn(async (ctx, session) => {
      await call(session.principal, 'POST', `/v1/domains/${idOf(ctx)}/verify`);
      seeOther(ctx, `${BASE}/domains/${idOf(ctx)}?done=verified`);
    }),
  );
  router.post(
    '/domains/:id/settings',
    signedIn(async (ctx, session) => {
      const values = settingsOf(form(ctx));
      try {
        await call(session.principal, 'PATCH', `/v1/domains/${idOf(ctx)}`, { body: settingsBody(values) });
      } catch (e) {
        const r = refusal(e);
        if (!r) throw e;
        return v.show(ctx, session, { settings: { values, error: r } }, (e as ApiError).status);
      }
      seeOther(ctx, `${BASE}/domains/${idOf(ctx)}?done=saved`);
    }),
  );
  router.get(
    '/domains/:id/delete',
    signedIn(async (ctx, session) => page(ctx, 200, deleteDomainPage(session, await v.domainOf(ctx, session)))),
  );
  router.post(
    '/domains/:id/delete',
    signedIn(async (ctx, session) => {
      const d = await v.domainOf(ctx, session);
      await call(session.principal, 'DELETE', `/v1/domains/${idOf(ctx)}`);
      seeOther(ctx, `${BASE}/domains?deleted=${encodeURIComponent(d.domain)}`);
    }),
  );
}
