import type { RouterContext } from '@koa/router';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import { attempt, cursorOf, doneOf, form, listOf, propertiesAndTopics } from './contact-common.js';
import { audiencePages } from './audience-pages.js';
import { contactImportPages } from './contact-import-pages.js';
import { propertyPages } from './contact-property-pages.js';
import { segmentPages } from './segment-pages.js';
import { signupFormPages } from './signup-form-pages.js';
import { topicPages } from './topic-pages.js';
import {
  contactBody,
  contactFields,
  contactValuesOf,
  newContactValues,
  postedContact,
  type ContactFormValues,
} from './pages/contact-form.js';
import type { AudienceJson, ContactJson } from './pages/contact-shared.js';
import { contactListPage, contactPage, deleteContactPage, type ContactView } from './pages/contacts.js';
import type { FormError } from './pages/form-errors.js';
import { BASE } from './pages/layout.js';
import { idOf, page, type PagesDeps, seeOther, text, deleteRoutes } from './respond.js';

/** What each ?done= of a redirect says on the list or on a contact's page. */
const DONE: Record<string, (v: string) => string> = {
  deleted: (email) => `Contact ${email} is deleted.`,
  added: () => 'Contact added.',
  saved: () => 'Contact saved.',
};

/**
 * Contacts, audiences, segments, topics, contact properties and signup forms: each a list, a create
 * form, its own page and a delete after a confirmation; the CSV import with its progress, and the export.
 */
export function contactPages(deps: PagesDeps): void {
  // the import's and the export's addresses first: /contacts/:id would take them
  contactImportPages(deps);
  contactRoutes(deps);
  audiencePages(deps);
  segmentPages(deps);
  topicPages(deps);
  propertyPages(deps);
  signupFormPages(deps);
}

type Views = ReturnType<typeof views>;

function views({ call }: PagesDeps) {
  const contactOf = async (session: Session, id: string) =>
    (await call(session.principal, 'GET', `/v1/contacts/${id}`)).body as ContactJson;
  const list = async (
    ctx: RouterContext,
    session: Session,
    sent?: ContactFormValues,
    error?: FormError,
    status = 200,
  ) => {
    const search =
      ctx.method === 'GET' ? { email: text(ctx.query.email), audience_id: text(ctx.query.audience_id) } : {};
    const [contacts, audiences, pt] = await Promise.all([
      listOf<ContactJson>(call, session, '/v1/contacts', { ...search, cursor: cursorOf(ctx) }),
      listOf<AudienceJson>(call, session, '/v1/audiences', { limit: '100' }),
      propertiesAndTopics(call, session),
    ]);
    const done = doneOf(ctx, DONE);
    const formValues = sent ?? newContactValues(pt.topics);
    const view = { contacts, search, audiences: audiences.data, ...pt, form: formValues, error, done };
    page(ctx, status, contactListPage(session, view));
  };
  const contact = async (ctx: RouterContext, session: Session, edit?: ContactView['edit'], status = 200) => {
    const [c, pt] = await Promise.all([contactOf(session, idOf(ctx)), propertiesAndTopics(call, session)]);
    // the audiences it is in, named (the first 100 of the project: a contact in more shows those)
    const audiences = (await listOf<AudienceJson>(call, session, '/v1/audiences', { limit: '100' })).data.filter((a) =>
      c.audiences.includes(a.id),
    );
    const view: ContactView = { contact: c, audiences, ...pt, edit, done: doneOf(ctx, DONE) };
    page(ctx, status, contactPage(session, view, edit?.values ?? contactValuesOf(c)));
  };
  return { contactOf, list, contact };
}

function contactRoutes(deps: PagesDeps): void {
  const { router, call, signedIn } = deps;
  const v: Views = views(deps);
  router.get(
    '/contacts',
    signedIn(async (ctx, session) => v.list(ctx, session)),
  );
  router.post(
    '/contacts',
    signedIn(async (ctx, session) => {
      const { properties, topics } = await propertiesAndTopics(call, session);
      const values = postedContact(form(ctx), properties, topics);
      const body = contactBody(values, properties, topics, true);
      const r = await attempt(contactFields(properties), async () =>
        call(session.principal, 'POST', '/v1/contacts', { body }),
      );
      if (!r.ok) return v.list(ctx, session, values, r.error, r.status);
      seeOther(ctx, `${BASE}/contacts/${(r.value.body as ContactJson).id}?added=1`);
    }),
  );
  router.get(
    '/contacts/:id',
    signedIn(async (ctx, session) => v.contact(ctx, session)),
  );
  router.post(
    '/contacts/:id',
    signedIn(async (ctx, session) => {
      const { properties, topics } = await propertiesAndTopics(call, session);
      const values = postedContact(form(ctx), properties, topics);
      const body = contactBody(values, properties, topics, false);
      const r = await attempt(contactFields(properties), async () =>
        call(session.principal, 'PATCH', `/v1/contacts/${idOf(ctx)}`, { body }),
      );
      if (!r.ok) return v.contact(ctx, session, { values, error: r.error }, r.status);
      seeOther(ctx, `${BASE}/contacts/${idOf(ctx)}?saved=1`);
    }),
  );
  deleteRoutes({ router, call, signedIn }, '/contacts', {
    read: (session, id) => v.contactOf(session, id),
    confirm: deleteContactPage,
    after: (_id, gone) => `/contacts?deleted=${encodeURIComponent((gone as { email: string }).email)}`,
  });
}
