import { notFound } from '../../../lib/errors.js';
import { keyedRoutes } from '../../account/keys/principal.js';
import {
  presentDraftRendered,
  presentRendered,
  presentSummary,
  presentTemplate,
  presentVersion,
} from './templates.presenter.js';
import {
  MAX_VERSION,
  PublishTemplateBody,
  RenderDraftBody,
  RenderTemplateBody,
  RestoreTemplateBody,
  UpdateTemplateBody,
} from './templates.schema.js';
import type { TemplateService } from './templates.service.js';

const route = keyedRoutes<{ templates: TemplateService }>();

/** The {version} of a path: an integer >= 1; anything else names no version (404). */
function versionParam(raw: string | undefined): number {
  const n = /^[1-9][0-9]{0,15}$/.test(raw ?? '') ? Number(raw) : NaN;
  if (!(n <= MAX_VERSION)) throw notFound(`version ${raw}`);
  return n;
}

// interface §4.3; scope templates:manage everywhere
export const templateRoutes = [
  route({
    method: 'POST',
    path: '/v1/templates',
    scope: 'templates:manage',
    summary: 'Create a template, or publish the next version of an existing id',
    body: PublishTemplateBody,
    async handler({ services, principal, body }) {
      const { template, version } = await services.templates.publish(principal.project.id, body);
      return { status: 201, body: { object: 'template', id: template.id, version: version.version } };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/templates',
    scope: 'templates:manage',
    summary: 'List templates with their latest version, newest first',
    async handler({ services, principal }) {
      return {
        status: 200,
        body: { object: 'list', data: (await services.templates.list(principal.project.id)).map(presentSummary) },
      };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/templates/render',
    scope: 'templates:manage',
    summary:
      'Preview a draft: render a version not published yet, checked as a publish and a send would be; nothing is stored',
    body: RenderDraftBody,
    async handler({ services, body }) {
      return { status: 200, body: presentDraftRendered(await services.templates.renderDraft(body)) };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/templates/:id',
    scope: 'templates:manage',
    summary: 'Get a template with every version, newest first',
    async handler({ services, principal, params }) {
      const { template, versions } = await services.templates.get(principal.project.id, params.id);
      return { status: 200, body: presentTemplate(template, versions) };
    },
  }),
  route({
    method: 'PATCH',
    path: '/v1/templates/:id',
    scope: 'templates:manage',
    summary: 'Change the name, category or split of a template',
    body: UpdateTemplateBody,
    async handler({ services, principal, params, body }) {
      const t = await services.templates.update(principal.project.id, params.id, body);
      return {
        status: 200,
        body: { object: 'template', id: t.id, name: t.name, category: t.category, split: t.split },
      };
    },
  }),
  route({
    method: 'DELETE',
    path: '/v1/templates/:id',
    scope: 'templates:manage',
    summary: 'Delete a template and all its versions; emails sent from it keep their content',
    async handler({ services, principal, params }) {
      const t = await services.templates.delete(principal.project.id, params.id);
      return { status: 200, body: { object: 'template', id: t.id, deleted: true } };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/templates/:id/versions/:version',
    scope: 'templates:manage',
    summary: 'Get one version of a template',
    async handler({ services, principal, params }) {
      return {
        status: 200,
        body: presentVersion(
          await services.templates.version(principal.project.id, params.id, versionParam(params.version)),
        ),
      };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/templates/:id/restore',
    scope: 'templates:manage',
    summary: 'Publish a copy of an earlier version as the newest',
    body: RestoreTemplateBody,
    async handler({ services, principal, params, body }) {
      const { template, version } = await services.templates.restore(principal.project.id, params.id, body.version);
      return {
        status: 201,
        body: { object: 'template', id: template.id, version: version.version, restored_from: body.version },
      };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/templates/:id/render',
    scope: 'templates:manage',
    summary: 'Preview: render a version with variables and a language, checked as a send would be',
    body: RenderTemplateBody,
    async handler({ services, principal, params, body }) {
      const { version, rendered } = await services.templates.render(principal.project.id, params.id, body);
      return { status: 200, body: presentRendered(version, rendered) };
    },
  }),
];
