import type { RouterContext } from '@koa/router';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import { attempt, cursorOf, doneOf, form, listOf } from './contact-common.js';
import { audienceListPage, audiencePage, deleteAudiencePage, type AudienceView } from './pages/audiences.js';
import type { AudienceJson, ContactJson } from './pages/contact-shared.js';
import type { FormError } from './pages/form-errors.js';
import { BASE } from './pages/layout.js';
import { idOf, page, type PagesDeps, seeOther, deleteRoutes } from './respond.js';

const DONE: Record<string, (v: string) => string> = {
  deleted: (id) => `Audience ${id} is deleted; its contacts stay in the project.`,
  created: () => 'Audience made: add contacts to it below, or import a CSV file into it.',
  added: (email) => `${email} is in the audience.`,
  removed: (email) => `${email} is out of the audience (the contact stays in the project).`,
};

/** Audiences: the list, making one, an audience's contacts, adding and removing one, deleting it. */
export function audiencePages({ router, call, signedIn }: PagesDeps): void {
  const audienceOf = async (session: Session, id: string) =>
    (await call(session.principal, 'GET', `/v1/audiences/${id}`)).body as AudienceJson;
  const list = async (ctx: RouterContext, session: Session, name = '', error?: FormError, status = 200) => {
    const audiences = await listOf<AudienceJson>(call, session, '/v1/audiences', { cursor: cursorOf(ctx) });
    page(ctx, status, audienceListPage(session, { audiences, name, error, done: doneOf(ctx, DONE) }));
  };
  const audience = async (ctx: RouterContext, session: Session, add?: AudienceView['add'], status = 200) => {
    const [a, contacts] = await Promise.all([
      audienceOf(session, idOf(ctx)),
      listOf<ContactJson>(call, session, '/v1/contacts', { audience_id: ctx.params.id, cursor: cursorOf(ctx) }),
    ]);
    page(ctx, status, audiencePage(session, { audience: a, contacts, add, done: doneOf(ctx, DONE) }));
  };

  router.get('/audiences', signedIn(list));
  router.post(
    '/audiences',
    signedIn(async (ctx, session) => {
      const name = form(ctx).get('name')?.trim() ?? '';
      const r = await attempt(['name'], () => call(session.principal, 'POST', '/v1/audiences', { body: { name } }));
      if (!r.ok) return list(ctx, session, name, r.error, r.status);
      seeOther(ctx, `${BASE}/audiences/${(r.value.body as AudienceJson).id}?created=1`);
    }),
  );
  router.get('/audiences/:id', signedIn(audience));
  router.post(
    '/audiences/:id/add',
    signedIn(async (ctx, session) => {
      const email = form(ctx).get('emails')?.trim() ?? '';
      const r = await attempt(['emails'], () =>
        call(session.principal, 'POST', `/v1/audiences/${idOf(ctx)}/contacts`, { body: { emails: [email] } }),
      );
      if (!r.ok) return audience(ctx, session, { email, error: r.error }, r.status);
      seeOther(ctx, `${BASE}/audiences/${idOf(ctx)}?added=${encodeURIComponent(email)}`);
    }),
  );
  router.post(
    '/audiences/:id/remove',
    signedIn(async (ctx, session) => {
      const contact = encodeURIComponent(form(ctx).get('contact_id') ?? '');
      await call(session.principal, 'DELETE', `/v1/audiences/${idOf(ctx)}/contacts/${contact}`);
      const c = (await call(session.principal, 'GET', `/v1/contacts/${contact}`)).body as ContactJson;
      seeOther(ctx, `${BASE}/audiences/${idOf(ctx)}?removed=${encodeURIComponent(c.email)}`);
    }),
  );
  deleteRoutes({ router, call, signedIn }, '/audiences', {
    read: (session, id) => audienceOf(session, id),
    confirm: deleteAudiencePage,
    after: (id) => `/audiences?deleted=${id}`,
  });
}
