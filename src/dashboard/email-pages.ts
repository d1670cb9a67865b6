import type { ParsedUrlQuery } from 'node:querystring';
import type { RouteCaller } from '../api/route-caller.js';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import { emailPage, emailState } from './pages/email-detail.js';
import { emailListPage, type EmailJson, type EventJson } from './pages/emails.js';
import { emailHtml, idOf, page, seeOther, type PagesDeps, text } from './respond.js';
import { BASE } from './pages/layout.js';

/** Emails: the list with its filters, an email's page, the part of it that refreshes, and its HTML. */
export function emailPages({ router, call, signedIn, services }: PagesDeps): void {
  router.get(
    '/emails',
    signedIn(async (ctx, session) => {
      const { filter, query } = listQuery(ctx.query);
      const list = (await call(session.principal, 'GET', '/v1/emails', { query })).body as {
        data: EmailJson[];
        next_cursor: string | null;
      };
      const delivery = await services.delivery.state(session.principal.project);
      page(ctx, 200, emailListPage(session, list, filter, delivery));
    }),
  );
  router.get(
    '/emails/:id',
    signedIn(async (ctx, session) => {
      const [email, events] = await emailWithEvents(call, session, idOf(ctx));
      const content = (await call(session.principal, 'GET', `/v1/emails/${idOf(ctx)}/content`)).body as {
        html: string | null;
        text: string | null;
      };
      page(ctx, 200, emailPage(session, email, events, content, Date.now()));
    }),
  );
  router.post(
    '/emails/:id/cancel',
    signedIn(async (ctx, session) => {
      await call(session.principal, 'POST', `/v1/emails/${idOf(ctx)}/cancel`);
      seeOther(ctx, `${BASE}/emails/${idOf(ctx)}`);
    }),
  );
  router.get(
    '/emails/:id/state',
    signedIn(async (ctx, session) => {
      const [email, events] = await emailWithEvents(call, session, idOf(ctx));
      page(ctx, 200, emailState(email, events, Date.now()));
    }),
  );
  router.get(
    '/emails/:id/html',
    signedIn(async (ctx, session) => {
      const content = (await call(session.principal, 'GET', `/v1/emails/${idOf(ctx)}/content`)).body as {
        html: string | null;
      };
      emailHtml(ctx, content.html);
    }),
  );
}

/** The list's filters as the page's query string gives them, and the /v1/emails query they make. */
function listQuery(q: ParsedUrlQuery) {
  const filter = {
    status: text(q.status),
    outcome: text(q.outcome),
    to: text(q.to),
    tag: text(q.tag),
    from: day(q.from),
    until: day(q.until),
  };
  const range = {
    created_after: filter.from && `${filter.from}T00:00:00Z`,
    created_before: filter.until && nextDay(filter.until),
  };
  const query = Object.fromEntries(
    Object.entries({
      status: filter.status,
      recipient_status: filter.outcome,
      to: filter.to,
      tag: filter.tag,
      ...range,
      cursor: text(q.cursor),
    }).filter(([, v]) => v),
  ) as Record<string, string>;
  return { filter, query };
}

async function emailWithEvents(call: RouteCaller, session: Session, id: string): Promise<[EmailJson, EventJson[]]> {
  const [email, events] = await Promise.all([
    call(session.principal, 'GET', `/v1/emails/${id}`),
    call(session.principal, 'GET', `/v1/emails/${id}/events`),
  ]);
  return [email.body as EmailJson, (events.body as { data: EventJson[] }).data];
}

/** A date field's value (YYYY-MM-DD), or nothing. */
function day(v: unknown): string | undefined {
  const t = text(v);
  return t && /^\d{4}-\d\d-\d\d$/.test(t) && !Number.isNaN(Date.parse(`${t}T00:00:00Z`)) ? t : undefined;
}

/** The start of the day after `d`: "until" a day includes all of it. */
function nextDay(d: string): string {
  return new Date(Date.parse(`${d}T00:00:00Z`) + 86_400_000).toISOString();
}
