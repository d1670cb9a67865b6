import type { RouterContext } from '@koa/router';
import { apiError, ApiError } from '../lib/errors.js';
import type { Principal } from '../modules/account/keys/principal.js';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import type { RouteCaller } from '../api/route-caller.js';
import { formFieldOf, type FormError } from './pages/form-errors.js';
import type { ListJson, PropertyJson, TopicJson } from './pages/contact-shared.js';
import { text } from './respond.js';

// What the route files of the Contacts section share.

export const form = (ctx: RouterContext) => ctx.state.form as URLSearchParams;

/**
 * A refusal the form can show beside a field (or above it); anything else is the error page's. A
 * property's field (`properties.plan`) is its own input's (`prop-plan`), when the form has one.
 */
export function refusal(e: unknown, fields: readonly string[]): FormError | null {
  if (!(e instanceof ApiError) || e.status >= 500 || e.code === 'unauthorized' || e.code === 'forbidden') return null;
  if (e.code === 'not_found' && !e.field) return null;
  const prop = /^properties\.([a-z0-9_]+)$/.exec(e.field ?? '');
  if (prop && fields.includes(`prop-${prop[1]}`)) return { message: e.message, field: `prop-${prop[1]}` };
  return { message: e.message, field: formFieldOf(e.field, fields) };
}

/** Runs an API call; a refusal for the form is returned to show, anything else thrown. */
export async function attempt<T>(
  fields: readonly string[],
  run: () => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; error: FormError; status: number }> {
  try {
    return { ok: true, value: await run() };
  } catch (e) {
    const r = refusal(e, fields);
    if (!r) throw e;
    return { ok: false, error: r, status: (e as ApiError).status };
  }
}

/** The status line of a redirect's `?name=value`, from the page's table of them (GET only). */
export function doneOf(ctx: RouterContext, done: Record<string, (v: string) => string>): string | undefined {
  if (ctx.method !== 'GET') return undefined;
  const [kind, value] = Object.entries(ctx.query).find(([k]) => k in done) ?? [];
  return kind && typeof value === 'string' ? done[kind](value) : undefined;
}

/** The `cursor` of a list page's address (GET only: a refused form answers the first page). */
export const cursorOf = (ctx: RouterContext) => (ctx.method === 'GET' ? text(ctx.query.cursor) : undefined);

/** A page of a /v1 list route. */
export async function listOf<T>(
  call: RouteCaller,
  session: Session,
  path: string,
  query: Record<string, string | undefined> = {},
): Promise<ListJson<T>> {
  const q = Object.fromEntries(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined));
  return (await call(session.principal, 'GET', path, { query: q })).body as ListJson<T>;
}

/** The project's declared contact properties and topics (the first 100 topics: the editor shows each). */
export async function propertiesAndTopics(call: RouteCaller, session: Session) {
  const [properties, topics] = await Promise.all([
    listOf<PropertyJson>(call, session, '/v1/contact-properties'),
    listOf<TopicJson>(call, session, '/v1/topics', { limit: '100' }),
  ]);
  return { properties: properties.data, topics: topics.data };
}

/**
 * The check the contacts routes make (scope contacts:manage, a project not suspended), for what the
 * dashboard runs through a service directly: the CSV import and export, and a filter's count.
 */
export function mayManageContacts(principal: Principal): void {
  if (principal.project.suspended) throw apiError('account_suspended', 'this project is suspended');
  if (!(principal.key.scopes as readonly string[]).includes('contacts:manage'))
    throw apiError('forbidden', 'this key lacks the contacts:manage scope');
}
