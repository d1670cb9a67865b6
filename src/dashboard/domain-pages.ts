import type { InsightsJson } from './pages/domain-insights.js';
import { domainListPage, domainPage, type DomainJson } from './pages/domains.js';
import { BASE } from './pages/layout.js';
import { idOf, page, type PagesDeps, seeOther } from './respond.js';

/** Domains: the list, a domain with its records, settings and insights; verify now and save settings. */
export function domainPages({ router, call, signedIn }: PagesDeps): void {
  router.get(
    '/domains',
    signedIn(async (ctx, session) => {
      const list = (await call(session.principal, 'GET', '/v1/domains')).body as { data: DomainJson[] };
      page(ctx, 200, domainListPage(session, list.data));
    }),
  );
  router.get(
    '/domains/:id',
    signedIn(async (ctx, session) => {
      const id = idOf(ctx);
      const [d, insights] = await Promise.all([
        call(session.principal, 'GET', `/v1/domains/${id}`),
        call(session.principal, 'GET', `/v1/domains/${id}/insights`),
      ]);
      page(ctx, 200, domainPage(session, d.body as DomainJson, insights.body as InsightsJson));
    }),
  );
  router.post(
    '/domains/:id/verify',
    signedIn(async (ctx, session) => {
      await call(session.principal, 'POST', `/v1/domains/${idOf(ctx)}/verify`);
      seeOther(ctx, `${BASE}/domains/${idOf(ctx)}`);
    }),
  );
  router.post(
    '/domains/:id/settings',
    signedIn(async (ctx, session) => {
      const form = ctx.state.form as URLSearchParams;
      // an unticked checkbox is absent from the form: absent means off
      const body: Record<string, unknown> = {
        open_tracking: form.get('open_tracking') === 'true',
        click_tracking: form.get('click_tracking') === 'true',
      };
      for (const field of ['tls', 'custom_return_path']) if (form.get(field)) body[field] = form.get(field)!.trim();
      await call(session.principal, 'PATCH', `/v1/domains/${idOf(ctx)}`, { body });
      seeOther(ctx, `${BASE}/domains/${idOf(ctx)}`);
    }),
  );
}
