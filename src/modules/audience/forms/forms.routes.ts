import { listBody } from '../../../lib/page.js';
import { keyedRoutes } from '../../account/keys/principal.js';
import { presentDeletedForm, presentForm } from './forms.presenter.js';
import { CreateFormBody, ListFormsQuery, UpdateFormBody } from './forms.schema.js';
import type { Form } from './forms.repo.js';
import type { FormService } from './forms.service.js';

const route = keyedRoutes<{ forms: FormService }>();

/** presentForm with the URL of the form's page, which the service knows (http.public_url) */
const presenter = (forms: FormService) => (f: Form) => presentForm(f, forms.pageUrl(f));

// Issue 27 (docs/forms.md): scope contacts:manage; the form's own page (/f/{id}) takes no key
export const formRoutes = [
  route({
    method: 'POST',
    path: '/v1/forms',
    scope: 'contacts:manage',
    summary:
      'Make a signup form: a public page (url) and a JSON endpoint that add confirmed contacts to an audience; its confirmation mail is live or test mail as the key is',
    body: CreateFormBody,
    async handler({ services, principal, body }) {
      const f = await services.forms.create(principal.project, principal.key.mode, body);
      return { status: 201, body: presenter(services.forms)(f) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/forms',
    scope: 'contacts:manage',
    summary: "The project's signup forms, newest first",
    query: ListFormsQuery,
    async handler({ services, principal, query }) {
      const page = await services.forms.list(principal.project.id, query.limit, query.cursor);
      return { status: 200, body: listBody(page, presenter(services.forms)) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/forms/:id',
    scope: 'contacts:manage',
    summary: 'A signup form',
    async handler({ services, principal, params }) {
      return {
        status: 200,
        body: presenter(services.forms)(await services.forms.get(principal.project.id, params.id)),
      };
    },
  }),
  route({
    method: 'PATCH',
    path: '/v1/forms/:id',
    scope: 'contacts:manage',
    summary:
      'Change a signup form (its environment stays that of the key that made it; a test key cannot change a live form)',
    body: UpdateFormBody,
    async handler({ services, principal, params, body }) {
      const f = await services.forms.update(principal.project, principal.key.mode, params.id, body);
      return { status: 200, body: presenter(services.forms)(f) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/v1/forms/:id',
    scope: 'contacts:manage',
    summary:
      'Delete a signup form: its page and its confirmation links stop working; the contacts it added stay (a test key cannot delete a live form)',
    async handler({ services, principal, params }) {
      const f = await services.forms.delete(principal.project.id, principal.key.mode, params.id);
      return { status: 200, body: presentDeletedForm(f) };
    },
  }),
];
