import { iso } from '../../../lib/time.js';
import type { RenderedContent } from './render-version.js';
import type { Template, TemplateVersion, TemplateVersionInfo } from './template.js';

/** interface §2.4: the list item. Versions are never deleted one by one, so their count is the latest number. */
export function presentSummary(t: Template) {
  return {
    id: t.id,
    name: t.name,
    latest_version: t.latestVersion,
    versions: t.latestVersion,
    created_at: iso(t.createdAt),
  };
}

/** interface §2.4 `template_version`; `restored_from` when it is a restored copy. */
export function presentVersion(v: TemplateVersionInfo) {
  return {
    object: 'template_version' as const,
    template_id: v.templateId,
    version: v.version,
    subject: v.subject,
    html: v.html,
    text: v.text,
    design: v.design,
    translations: v.translations,
    variables: v.variables,
    restored_from: v.restoredFrom,
    created_at: iso(v.createdAt),
  };
}

/** CONTRACT §5: GET /v1/templates/{id}. */
export function presentTemplate(t: Template, versions: TemplateVersionInfo[]) {
  return {
    object: 'template' as const,
    id: t.id,
    name: t.name,
    category: t.category,
    split: t.split,
    latest_version: t.latestVersion,
    created_at: iso(t.createdAt),
    updated_at: iso(t.updatedAt),
    versions: versions.map(presentVersion),
  };
}

/** The preview (issue 20's shape): `language` is the translation used, null for the main version. */
/** POST /v1/templates/render: a draft has no id or version yet. */
export function presentDraftRendered(r: RenderedContent) {
  return {
    object: 'rendered_template' as const,
    template_id: null,
    version: null,
    language: r.translation,
    subject: r.subject,
    html: r.html,
    text: r.text,
  };
}

export function presentRendered(v: TemplateVersion, r: RenderedContent) {
  return {
    object: 'rendered_template' as const,
    template_id: v.templateId,
    version: v.version,
    language: r.translation,
    subject: r.subject,
    html: r.html,
    text: r.text,
  };
}
