import { validationError } from '../../../lib/errors.js';
import { timeOrderedId } from '../../../lib/ids.js';
import { keyedRoutes } from '../../account/keys/principal.js';
import type { TemplateService } from '../../sending/templates/templates.service.js';
import { RESEND_PREFIX } from './resend-errors.js';
import { ResendListQuery, resendList } from './resend-lists.js';
import {
  checkedAlias,
  duplicateBody,
  keptVariables,
  publishBodyOf,
  refuseSender,
  ResendCreateTemplateBody,
  ResendUpdateTemplateBody,
  sourceOf,
  type ResendTemplateSource,
} from './resend-templates.js';
import { pageOf, resendListedTemplate, resendTemplate } from './resend-templates.presenter.js';

const route = keyedRoutes<{ templates: TemplateService }>();
const path = `${RESEND_PREFIX}/templates`;

/** The answer of every write: the template's id (which is also its alias). */
const answer = (id: string) => ({ status: 200, body: { object: 'template', id } });

/** PATCH /templates/{id}: the latest version's source with the fields given, when they change it; null otherwise. */
function changedSource(b: ResendUpdateTemplateBody, base: ResendTemplateSource): ResendTemplateSource | null {
  if (b.subject == null && b.html === undefined && b.text === undefined && b.variables == null) return null;
  return {
    syntax: 'resend',
    subject: b.subject ?? base.subject,
    html: b.html === undefined ? base.html : b.html,
    text: b.text === undefined ? base.text : b.text,
    variables: b.variables ? keptVariables(b.variables) : base.variables,
  };
}

// Resend's templates routes (docs/resend.md), over the /v1 templates service (scope templates:manage).
// The identifier in a path is our template id, which is Resend's id and alias at once.
export const resendTemplatesRoutes = [
  route({
    method: 'POST',
    path,
    scope: 'templates:manage',
    summary: "Resend's create: publishes version 1 ({{{NAME}}} variables translated); alias chooses the id",
    body: ResendCreateTemplateBody,
    async handler({ services, principal, body }) {
      refuseSender(body);
      if (body.subject == null)
        throw validationError('subject', 'is required here: a send with a template takes its subject from it');
      const id = body.alias == null ? timeOrderedId() : checkedAlias(body.alias);
      const source: ResendTemplateSource = {
        syntax: 'resend',
        subject: body.subject,
        html: body.html,
        text: body.text ?? null,
        variables: keptVariables(body.variables ?? []),
      };
      const ours = publishBodyOf(id, body.name, source, null);
      await services.templates.publish(principal.project.id, ours, { id: 'new', foreignSource: source });
      return answer(id);
    },
  }),
  route({
    method: 'GET',
    path,
    scope: 'templates:manage',
    summary: "Resend's list of templates, newest first: {object: 'list', has_more, data}",
    query: ResendListQuery,
    async handler({ services, principal, query }) {
      const page = pageOf(await services.templates.list(principal.project.id), query);
      const times = await services.templates.publishedTimes(page.items);
      const data = page.items.map((t) => resendListedTemplate(t, times.get(t.uid)));
      return { status: 200, body: resendList(data, page.hasMore) };
    },
  }),
  route({
    method: 'GET',
    path: `${path}/:id`,
    scope: 'templates:manage',
    summary: "Resend's template by id or alias: its latest version as written, status published",
    async handler({ services, principal, params }) {
      const { template, versions } = await services.templates.get(principal.project.id, params.id);
      return { status: 200, body: resendTemplate(template, versions[0]) };
    },
  }),
  route({
    method: 'PATCH',
    path: `${path}/:id`,
    scope: 'templates:manage',
    summary: "Resend's update: a new content publishes the next version at once; a name alone renames",
    body: ResendUpdateTemplateBody,
    async handler({ services, principal, params, body }) {
      refuseSender(body);
      const projectId = principal.project.id;
      const { template, versions } = await services.templates.get(projectId, params.id);
      if (body.alias != null && body.alias !== template.id)
        throw validationError('alias', "cannot be changed: not available here, where the alias is the template's id");
      const latest = versions[0];
      const source = changedSource(body, sourceOf(latest));
      if (source) {
        const ours = publishBodyOf(template.id, body.name ?? undefined, source, latest);
        await services.templates.publish(projectId, ours, { id: 'existing', foreignSource: source });
      } else if (body.name != null) await services.templates.update(projectId, template.id, { name: body.name });
      return answer(template.id);
    },
  }),
  route({
    method: 'POST',
    path: `${path}/:id/publish`,
    scope: 'templates:manage',
    summary: "Resend's publish: the latest version is the one sends use already; answers the id",
    async handler({ services, principal, params }) {
      const { template } = await services.templates.get(principal.project.id, params.id);
      return answer(template.id);
    },
  }),
  route({
    method: 'POST',
    path: `${path}/:id/duplicate`,
    scope: 'templates:manage',
    summary: "Resend's duplicate: the latest version published as a new template; answers the new id",
    async handler({ services, principal, params }) {
      const projectId = principal.project.id;
      const { template, versions } = await services.templates.get(projectId, params.id);
      const id = timeOrderedId();
      await services.templates.publish(projectId, duplicateBody(template.name, versions[0], id), {
        id: 'new',
        foreignSource: versions[0].foreignSource ?? null,
      });
      return answer(id);
    },
  }),
  route({
    method: 'DELETE',
    path: `${path}/:id`,
    scope: 'templates:manage',
    summary: "Resend's remove: the template and its versions; emails sent from it keep their content",
    async handler({ services, principal, params }) {
      const t = await services.templates.delete(principal.project.id, params.id);
      return { status: 200, body: { object: 'template', id: t.id, deleted: true } };
    },
  }),
];
