import type { Session } from '../modules/account/sessions/sessions.service.js';
import { ApiError } from '../lib/errors.js';
import { keyPages } from './key-pages.js';
import { BASE } from './pages/layout.js';
import { queryString } from './pages/html.js';
import {
  suppressionsPage,
  type SuppressionFilter,
  type SuppressionJson,
  type SuppressionNotice,
} from './pages/suppressions.js';
import { usagePage, type UsageJson } from './pages/usage.js';
import { page, seeOther, text, type PagesDeps } from './respond.js';

/** The project's own things: its suppression list, its API keys (key-pages.ts) and its usage. */
export function accountPages(deps: PagesDeps): void {
  suppressionPages(deps);
  keyPages(deps);
  const { router, call, signedIn } = deps;
  router.get(
    '/usage',
    signedIn(async (ctx, session) => {
      const usage = (await call(session.principal, 'GET', '/v1/usage')).body as UsageJson;
      page(ctx, 200, usagePage(session, usage));
    }),
  );
}

type SuppressionList = { data: SuppressionJson[]; next_cursor: string | null };

/** Suppressions: the list with its filters, and forms that add an address and take one off. */
function suppressionPages({ router, call, signedIn }: PagesDeps): void {
  const listOf = async (session: Session, filter: SuppressionFilter, cursor?: string) => {
    const query = Object.fromEntries(Object.entries({ ...filter, cursor }).filter(([, v]) => v)) as Record<
      string,
      string
    >;
    return (await call(session.principal, 'GET', '/v1/suppressions', { query })).body as SuppressionList;
  };
  router.get(
    '/suppressions',
    signedIn(async (ctx, session) => {
      const filter = { reason: text(ctx.query.reason), email: text(ctx.query.email) };
      const notice: SuppressionNotice = {
        added: text(ctx.query.added),
        kept: text(ctx.query.kept),
        removed: text(ctx.query.removed),
      };
      page(ctx, 200, suppressionsPage(session, await listOf(session, filter, text(ctx.query.cursor)), filter, notice));
    }),
  );
  router.post(
    '/suppressions',
    signedIn(async (ctx, session) => {
      const form = ctx.state.form as URLSearchParams;
      const email = form.get('email')?.trim() ?? '';
      const reason = form.get('reason') || 'manual';
      // a day: the suppression ends as it starts (00:00 UTC)
      const until = form.get('until')?.trim() ?? '';
      try {
        const r = await call(session.principal, 'POST', '/v1/suppressions', {
          body: { email, reason, ...(until ? { expires_at: `${until}T00:00:00Z` } : {}) },
        });
        const stored = (r.body as SuppressionJson).email;
        seeOther(ctx, `${BASE}/suppressions${queryString(r.status === 201 ? { added: stored } : { kept: stored })}`);
      } catch (e) {
        if (!(e instanceof ApiError) || e.code !== 'validation_error') throw e;
        // sent back on the page it came from, with what was typed and what was wrong with it
        page(
          ctx,
          400,
          suppressionsPage(
            session,
            await listOf(session, {}),
            {},
            { error: { message: e.message, email, reason, until } },
          ),
        );
      }
    }),
  );
  router.post(
    '/suppressions/remove',
    signedIn(async (ctx, session) => {
      const email = (ctx.state.form as URLSearchParams).get('email') ?? '';
      const r = await call(session.principal, 'DELETE', `/v1/suppressions/${encodeURIComponent(email)}`);
      seeOther(ctx, `${BASE}/suppressions${queryString({ removed: (r.body as SuppressionJson).email })}`);
    }),
  );
}
