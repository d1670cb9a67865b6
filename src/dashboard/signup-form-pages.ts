import type { RouterContext } from '@koa/router';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import { attempt, cursorOf, doneOf, form, listOf } from './contact-common.js';
import type { AudienceJson, PropertyJson } from './pages/contact-shared.js';
import type { FormError } from './pages/form-errors.js';
import { BASE } from './pages/layout.js';
import {
  NEW_SIGNUP_FORM,
  postedSignupForm,
  SIGNUP_FORM_FIELDS,
  signupFormBody,
  signupFormValuesOf,
  type SignupFormJson,
  type SignupFormValues,
} from './pages/signup-form-fields.js';
import { deleteSignupFormPage, signupFormListPage, signupFormPage } from './pages/signup-forms.js';
import { idOf, page, type PagesDeps, seeOther, deleteRoutes } from './respond.js';

const DONE: Record<string, (v: string) => string> = {
  deleted: (id) => `Signup form ${id} is deleted: its page and its links stop working.`,
  created: () => 'Form made: paste the snippet below into your site, or link to its page.',
  saved: () => 'Form saved.',
};

/** Signup forms: the list, making one, a form's embed snippet and settings, deleting it. */
export function signupFormPages(deps: PagesDeps): void {
  const v = views(deps);
  listRoutes(deps, v);
  formRoutes(deps, v);
}

type Views = ReturnType<typeof views>;

function views({ call }: PagesDeps) {
  const formOf = async (session: Session, id: string) =>
    (await call(session.principal, 'GET', `/v1/forms/${id}`)).body as SignupFormJson;
  const choices = async (session: Session) => {
    const [audiences, properties] = await Promise.all([
      listOf<AudienceJson>(call, session, '/v1/audiences', { limit: '100' }),
      listOf<PropertyJson>(call, session, '/v1/contact-properties'),
    ]);
    return { audiences: audiences.data, properties: properties.data };
  };
  const list = async (
    ctx: RouterContext,
    session: Session,
    values = NEW_SIGNUP_FORM,
    error?: FormError,
    status = 200,
  ) => {
    const [forms, c] = await Promise.all([
      listOf<SignupFormJson>(call, session, '/v1/forms', { cursor: cursorOf(ctx) }),
      choices(session),
    ]);
    page(ctx, status, signupFormListPage(session, { forms, ...c, form: values, error, done: doneOf(ctx, DONE) }));
  };
  const one = async (
    ctx: RouterContext,
    session: Session,
    edit?: { values: SignupFormValues; error: FormError },
    status = 200,
  ) => {
    const [f, c] = await Promise.all([formOf(session, idOf(ctx)), choices(session)]);
    // without http.public_url the API knows no address for the page: it is at this origin's /f/{id}
    const url = f.url ?? `${ctx.origin}/f/${encodeURIComponent(f.id)}`;
    const values = edit?.values ?? signupFormValuesOf(f);
    page(
      ctx,
      status,
      signupFormPage(session, { form: f, url, ...c, values, error: edit?.error, done: doneOf(ctx, DONE) }),
    );
  };
  return { formOf, list, one };
}

function listRoutes({ router, call, signedIn }: PagesDeps, { list }: Views): void {
  router.get('/forms', signedIn(list));
  router.post(
    '/forms',
    signedIn(async (ctx, session) => {
      const values = postedSignupForm(form(ctx));
      const body = signupFormBody(values);
      const r = await attempt(SIGNUP_FORM_FIELDS, () => call(session.principal, 'POST', '/v1/forms', { body }));
      if (!r.ok) return list(ctx, session, values, r.error, r.status);
      seeOther(ctx, `${BASE}/forms/${(r.value.body as SignupFormJson).id}?created=1`);
    }),
  );
}

/** A form's page: its snippet and settings, and its delete. */
function formRoutes({ router, call, signedIn }: PagesDeps, { formOf, one }: Views): void {
  router.get('/forms/:id', signedIn(one));
  router.post(
    '/forms/:id',
    signedIn(async (ctx, session) => {
      const values = postedSignupForm(form(ctx));
      const body = signupFormBody(values);
      const r = await attempt(SIGNUP_FORM_FIELDS, () =>
        call(session.principal, 'PATCH', `/v1/forms/${idOf(ctx)}`, { body }),
      );
      if (!r.ok) return one(ctx, session, { values, error: r.error }, r.status);
      seeOther(ctx, `${BASE}/forms/${idOf(ctx)}?saved=1`);
    }),
  );
  deleteRoutes({ router, call, signedIn }, '/forms', {
    read: (session, id) => formOf(session, id),
    confirm: deleteSignupFormPage,
    after: (id) => `/forms?deleted=${id}`,
  });
}
