import type { RouterContext } from '@koa/router';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import { attempt, doneOf, form, listOf } from './contact-common.js';
import { PROPERTY_FIELDS, propertyListPage, type PropertyFormValues } from './pages/contact-properties.js';
import type { PropertyJson } from './pages/contact-shared.js';
import type { FormError } from './pages/form-errors.js';
import { BASE } from './pages/layout.js';
import { page, type PagesDeps, seeOther } from './respond.js';

const DONE: Record<string, (v: string) => string> = {
  deleted: (key) => `Property ${key} is deleted; the values contacts hold stay until they change.`,
  declared: (key) => `Property ${key} is declared: contacts can hold it now.`,
};

const NEW_PROPERTY: PropertyFormValues = { key: '', type: 'string', fallback: '' };

/** A fallback as the API takes it, of the property's type (a value that is not one, it refuses naming why). */
function fallbackOf(v: PropertyFormValues): string | number | boolean | undefined {
  if (v.fallback === '') return undefined;
  if (v.type === 'number' && Number.isFinite(Number(v.fallback))) return Number(v.fallback);
  if (v.type === 'boolean' && (v.fallback === 'true' || v.fallback === 'false')) return v.fallback === 'true';
  return v.fallback;
}

/** Contact properties: the declared ones, declaring one, deleting one. */
export function propertyPages({ router, call, signedIn }: PagesDeps): void {
  const list = async (ctx: RouterContext, session: Session, values = NEW_PROPERTY, error?: FormError, status = 200) => {
    const properties = (await listOf<PropertyJson>(call, session, '/v1/contact-properties')).data;
    page(ctx, status, propertyListPage(session, { properties, form: values, error, done: doneOf(ctx, DONE) }));
  };
  router.get('/contact-properties', signedIn(list));
  router.post(
    '/contact-properties',
    signedIn(async (ctx, session) => {
      const f = form(ctx);
      const values = {
        key: f.get('key')?.trim() ?? '',
        type: f.get('type') ?? 'string',
        fallback: f.get('fallback')?.trim() ?? '',
      };
      const fallback = fallbackOf(values);
      const body = { key: values.key, type: values.type, ...(fallback === undefined ? {} : { fallback }) };
      const r = await attempt(PROPERTY_FIELDS, () =>
        call(session.principal, 'POST', '/v1/contact-properties', { body }),
      );
      if (!r.ok) return list(ctx, session, values, r.error, r.status);
      seeOther(ctx, `${BASE}/contact-properties?declared=${encodeURIComponent(values.key)}`);
    }),
  );
  router.post(
    '/contact-properties/:key/delete',
    signedIn(async (ctx, session) => {
      const key = encodeURIComponent(ctx.params.key);
      await call(session.principal, 'DELETE', `/v1/contact-properties/${key}`);
      seeOther(ctx, `${BASE}/contact-properties?deleted=${key}`);
    }),
  );
}
