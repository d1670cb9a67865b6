import { validationError } from '../../../lib/errors.js';
import { iso } from '../../../lib/time.js';
import type { Template, TemplateVersionInfo } from '../../sending/templates/template.js';
import { sourceOf } from './resend-templates.js';

// Our templates as Resend shows them (docs/resend.md). Pure. Every version of ours is published
// (sends use the latest): status is always `published`, with nothing unpublished; the content is
// the latest version's as it was written (Resend's syntax when it came through /resend).

/** An item of GET /templates. */
export function resendListedTemplate(t: Template, publishedAt: number | undefined) {
  return {
    id: t.id,
    name: t.name,
    created_at: iso(t.createdAt),
    updated_at: iso(t.updatedAt),
    status: 'published' as const,
    published_at: iso(publishedAt ?? t.updatedAt),
    // our id is what Resend's alias is: a name of the client's that every route takes
    alias: t.id,
  };
}

/** GET /templates/{id}: the template and its latest version. */
export function resendTemplate(t: Template, latest: TemplateVersionInfo) {
  const source = sourceOf(latest);
  const at = iso(latest.createdAt);
  const variables = source.variables
    ? source.variables.map((v) => ({ ...v, created_at: at, updated_at: at }))
    : Object.entries(latest.variables).map(([key, spec]) => ({
        key,
        type: spec.type,
        fallback_value: null,
        created_at: at,
        updated_at: at,
      }));
  return {
    object: 'template' as const,
    ...resendListedTemplate(t, latest.createdAt),
    subject: source.subject,
    html: source.html,
    text: source.text,
    variables,
    from: null,
    reply_to: null,
    has_unpublished_versions: false,
    current_version_id: `${t.id}@${latest.version}`,
  };
}

/**
 * A page of a list held whole (a project's templates), as Resend pages: `after` an id (older),
 * `before` one (newer), `limit` items; an id the list does not hold is refused.
 */
export function pageOf<T extends { id: string }>(
  items: readonly T[],
  q: { limit: number; after?: string | undefined; before?: string | undefined },
): { items: T[]; hasMore: boolean } {
  if (q.after !== undefined && q.before !== undefined)
    throw validationError('before', 'cannot be given with after: page one way at a time');
  const cursor = q.after ?? q.before;
  const at = cursor === undefined ? -1 : items.findIndex((x) => x.id === cursor);
  if (cursor !== undefined && at < 0)
    throw validationError(q.after !== undefined ? 'after' : 'before', `names no item of this list: ${cursor}`);
  if (q.before !== undefined) {
    const start = Math.max(0, at - q.limit);
    return { items: items.slice(start, at), hasMore: start > 0 };
  }
  const start = at + 1;
  return { items: items.slice(start, start + q.limit), hasMore: start + q.limit < items.length };
}
