import { validationError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import type { CompiledVersion, Template, TemplateVersion, VersionContent } from './template.js';
import type { PublishTemplateBody, UpdateTemplateBody } from './templates.schema.js';
import { declaredOf } from './versions.js';

// The rows a publish, an update and a restore write, decided from the request
// and the row read under lock; the service reads and writes them in its
// transaction. Pure.

/** What POST /v1/templates publishes (variables with their defaults filled in). */
export function publishedContent(body: PublishTemplateBody): VersionContent {
  return {
    subject: body.subject,
    html: body.html ?? null,
    text: body.text ?? null,
    design: body.design ?? null,
    translations: body.translations ?? {},
    variables: declaredOf(body.variables),
  };
}

/** The template a publish leaves: the next version of the one there, or a new one at version 1. */
export function publishedTemplate(
  old: Template | null,
  projectId: string,
  body: PublishTemplateBody,
  now: number,
): Template {
  return old
    ? {
        ...old,
        name: body.name ?? old.name,
        category: body.category ?? old.category,
        latestVersion: old.latestVersion + 1,
        updatedAt: now,
      }
    : {
        uid: newId('template', now),
        projectId,
        id: body.id,
        name: body.name ?? body.id,
        category: body.category ?? null,
        split: null,
        latestVersion: 1,
        createdAt: now,
        updatedAt: now,
      };
}

/** The version a publish adds: the template's newest. */
export function publishedVersion(
  template: Template,
  content: VersionContent,
  compiled: CompiledVersion,
  now: number,
  foreignSource: unknown = null,
): TemplateVersion {
  return {
    ...content,
    templateUid: template.uid,
    templateId: template.id,
    version: template.latestVersion,
    compiled,
    restoredFrom: null,
    createdAt: now,
    foreignSource,
  };
}

/** PATCH /v1/templates/{id}: what is given replaces what was (null clears category and split). */
export function updatedTemplate(old: Template, body: UpdateTemplateBody, now: number): Template {
  return {
    ...old,
    name: body.name ?? old.name,
    category: body.category === undefined ? old.category : body.category,
    split: body.split === undefined ? old.split : body.split,
    updatedAt: now,
  };
}

/** Every version named must exist, once; the percents add up to 100. */
export function checkSplit(split: NonNullable<UpdateTemplateBody['split']>, latest: number): void {
  const seen = new Set<number>();
  split.forEach((s, i) => {
    if (s.version > latest)
      throw validationError(`split[${i}].version`, `version ${s.version} does not exist (the latest is ${latest})`);
    if (seen.has(s.version)) throw validationError(`split[${i}].version`, `version ${s.version} is named twice`);
    seen.add(s.version);
  });
  const total = split.reduce((n, s) => n + s.percent, 0);
  if (total !== 100) throw validationError('split', `the percents must add up to 100 (they add up to ${total})`);
}

/** What a stored version was published from. */
export const contentOf = (v: TemplateVersion): VersionContent => ({
  subject: v.subject,
  html: v.html,
  text: v.text,
  design: v.design,
  translations: v.translations,
  variables: v.variables,
});
