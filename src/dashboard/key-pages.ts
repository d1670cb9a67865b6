import { ApiError } from '../lib/errors.js';
import { KEY_MODES, SCOPES } from '../modules/account/keys/scopes.js';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import { queryString } from './pages/html.js';
import { keysPage, type KeyForm, type KeyJson, type NewKeyJson } from './pages/keys.js';
import { BASE } from './pages/layout.js';
import { page, seeOther, text, type PagesDeps } from './respond.js';

/**
 * API keys: the list (never a secret), a form that creates a key and shows
 * its secret once, in the answer to the form itself (never after a redirect,
 * never again), and a revoke button per key. Revoking the session's own key
 * ends the session at its next page.
 */
export function keyPages({ router, call, signedIn }: PagesDeps): void {
  const listOf = async (session: Session) =>
    ((await call(session.principal, 'GET', '/v1/api-keys')).body as { data: KeyJson[] }).data;
  const options = { scopes: SCOPES, modes: KEY_MODES };
  router.get(
    '/api-keys',
    signedIn(async (ctx, session) => {
      const revoked = text(ctx.query.revoked);
      page(ctx, 200, keysPage(session, await listOf(session), { ...options, ...(revoked ? { revoked } : {}) }));
    }),
  );
  router.post(
    '/api-keys',
    signedIn(async (ctx, session) => {
      const f = ctx.state.form as URLSearchParams;
      const form: KeyForm = {
        name: f.get('name')?.trim() ?? '',
        mode: f.get('mode') ?? session.principal.key.mode,
        scopes: f.getAll('scopes'),
      };
      const refuse = async (message: string, status: number) =>
        page(ctx, status, keysPage(session, await listOf(session), { ...options, error: { message, form } }));
      if (!form.scopes.length) return refuse('Choose at least one scope for the new key.', 400);
      let created: NewKeyJson;
      try {
        const body = { ...(form.name ? { name: form.name } : {}), mode: form.mode, scopes: form.scopes };
        created = (await call(session.principal, 'POST', '/v1/api-keys', { body })).body as NewKeyJson;
      } catch (e) {
        // a refusal of what was asked (a scope or mode this key cannot grant, a name too long), not of the key itself
        if (
          e instanceof ApiError &&
          (e.code === 'validation_error' ||
            (e.code === 'forbidden' && session.principal.key.scopes.includes('keys:manage')))
        )
          return refuse(e.message, e.status);
        throw e;
      }
      // the secret is in this answer only, which no cache keeps (Cache-Control: no-store); the list never shows it
      page(ctx, 201, keysPage(session, await listOf(session), { ...options, created }));
    }),
  );
  router.post(
    '/api-keys/:id/revoke',
    signedIn(async (ctx, session) => {
      const r = await call(session.principal, 'DELETE', `/v1/api-keys/${encodeURIComponent(ctx.params.id)}`);
      seeOther(ctx, `${BASE}/api-keys${queryString({ revoked: (r.body as KeyJson).id })}`);
    }),
  );
}
