import type { RouteCaller } from '../api/route-caller.js';
import { ApiError } from '../lib/errors.js';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import type { ContactJson } from './pages/contact-shared.js';
import type { DomainJson } from './pages/domains.js';
import type { EmailJson } from './pages/emails.js';
import { BASE } from './pages/layout.js';
import { searchPage, type SearchFound } from './pages/search.js';
import type { TemplateSummaryJson } from './pages/templates.js';
import { page, seeOther, type PagesDeps } from './respond.js';
import { searchTerms, type SearchTerms } from './pages/search-terms.js';

/** Rows shown of each kind; a link leads to the full list where there is one. */
const SHOWN = 10;

/**
 * GET /search?q=: the header's box. An email id or a Message-ID of ours
 * that names an email goes straight to its page; anything else lists what
 * matches, kind by kind, each asked of its /v1 route with the session's
 * key (a kind the key may not read is left out).
 */
export function searchPages({ router, call, signedIn }: PagesDeps): void {
  router.get(
    '/search',
    signedIn(async (ctx, session) => {
      const t = searchTerms(typeof ctx.query.q === 'string' ? ctx.query.q : '');
      if (!t.q) return page(ctx, 200, searchPage(session, t, null));
      if (t.emailId) {
        const email = await readable(() => get<EmailJson>(call, session, `/v1/emails/${t.emailId}`), true);
        if (email) return seeOther(ctx, `${BASE}/emails/${email.id}`);
      }
      page(ctx, 200, searchPage(session, t, await find(call, session, t)));
    }),
  );
}

async function find(call: RouteCaller, session: Session, t: SearchTerms): Promise<SearchFound> {
  const has = (...values: Array<string | null>) => values.some((v) => v?.toLowerCase().includes(t.words));
  const [emails, domains, templates, contacts] = await Promise.all([
    t.recipient || t.tag
      ? readable(() =>
          list<EmailJson>(call, session, '/v1/emails', t.recipient ? { to: t.recipient } : { tag: t.tag! }),
        )
      : null,
    readable(async () => (await list<DomainJson>(call, session, '/v1/domains')).data.filter((d) => has(d.domain))),
    readable(async () =>
      (await list<TemplateSummaryJson>(call, session, '/v1/templates')).data.filter((tp) => has(tp.id, tp.name)),
    ),
    readable(() => list<ContactJson>(call, session, '/v1/contacts', { email: t.q })),
  ]);
  return {
    missingEmail: t.emailId,
    emails,
    domains: domains?.slice(0, SHOWN) ?? null,
    templates: templates?.slice(0, SHOWN) ?? null,
    contacts,
  };
}

async function get<T>(call: RouteCaller, session: Session, path: string): Promise<T> {
  return (await call(session.principal, 'GET', path)).body as T;
}

/** A list route's first rows (SHOWN), and whether it has more. */
async function list<T>(
  call: RouteCaller,
  session: Session,
  path: string,
  query: Record<string, string> = {},
): Promise<{ data: T[]; more: boolean }> {
  const limited = path === '/v1/domains' || path === '/v1/templates' ? query : { ...query, limit: String(SHOWN) };
  const body = (await call(session.principal, 'GET', path, { query: limited })).body as {
    data: T[];
    next_cursor?: string | null;
  };
  return { data: body.data, more: !!body.next_cursor };
}

/** What the key may read, else null: a 403 (a key without the scope) leaves the kind out, as a 404 leaves out one email, or a query the route refuses (400). */
async function readable<T>(read: () => Promise<T>, missingIsNull = false): Promise<T | null> {
  try {
    return await read();
  } catch (e) {
    if (e instanceof ApiError && (e.status === 403 || e.status === 400 || (missingIsNull && e.status === 404)))
      return null;
    throw e;
  }
}
