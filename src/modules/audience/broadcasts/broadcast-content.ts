// A broadcast's content for one contact (docs/broadcasts.md). Pure.
//
// Inline subject/html/text are templates of the templates' language with three variables:
// `contact` (email, first_name, last_name, id and the declared properties, their fallbacks
// where the contact has none), `preferences_url` (the contact's preference page) and
// `unsubscribe_url` (the same page: one place to leave a topic or all broadcast mail).
// `{{contact.first_name | there}}` falls back on a missing name. A template_id broadcast gets
// the same variables; its version reads those it declares.

import { ApiError, validationError } from '../../../lib/errors.js';
import type { SendEmailBody } from '../../sending/emails/emails.schema.js';
import { AUTO_UNSUBSCRIBE } from '../../sending/emails/list-unsubscribe.js';
import type { ContactProperty, PropertyValue } from '../contacts/contact-properties.js';
import type { Declared } from '../../sending/templates/language/index.js';
import { renderVersion, type RenderedContent } from '../../sending/templates/render-version.js';
import type { TemplateVersion } from '../../sending/templates/template.js';
import { compileVersion } from '../../sending/templates/versions.js';
import type { BroadcastContent } from './broadcast.js';

export const BROADCAST_VARIABLES: Declared = {
  contact: { type: 'object', required: true },
  preferences_url: { type: 'string', required: true },
  unsubscribe_url: { type: 'string', required: true },
};

/** A contact as the fan-out reads it. */
export interface FanOutContact {
  id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  properties: Record<string, PropertyValue>;
}

export function broadcastVariables(
  c: FanOutContact,
  properties: readonly ContactProperty[],
  preferencesUrl: string,
): Record<string, unknown> {
  const contact: Record<string, unknown> = { id: c.id, email: c.email, first_name: c.firstName, last_name: c.lastName };
  for (const p of properties) contact[p.key] = Object.hasOwn(c.properties, p.key) ? c.properties[p.key] : p.fallback;
  return { contact, preferences_url: preferencesUrl, unsubscribe_url: preferencesUrl };
}

/**
 * Inline content compiled as a template version of its own (checked at every
 * write, with field, line and column), or null for a template_id broadcast.
 */
export function compileInline(content: BroadcastContent): TemplateVersion | null {
  if (content.template_id !== undefined) return null;
  const source = {
    subject: content.subject ?? '',
    html: content.html ?? null,
    text: content.text ?? null,
    design: null,
    translations: {},
    variables: BROADCAST_VARIABLES,
  };
  return {
    templateUid: '',
    templateId: '',
    version: 0,
    ...source,
    restoredFrom: null,
    createdAt: 0,
    compiled: compiled(source),
  };
}

/** A template mistake says "html line 1, column 4: …": as an error of a broadcast field it starts "html: ". */
function compiled(source: Parameters<typeof compileVersion>[0]) {
  try {
    return compileVersion(source);
  } catch (e) {
    if (e instanceof ApiError && e.field && e.message.startsWith(`${e.field} `))
      throw validationError(e.field, e.message.slice(e.field.length + 1));
    throw e;
  }
}

export function renderInline(version: TemplateVersion, variables: Record<string, unknown>): RenderedContent {
  return renderVersion(version, variables, null);
}

/**
 * The POST /v1/emails body of one contact's email: the acceptance rules of
 * a send apply to it as they are (prepareEmail, then the accept). It always
 * asks for one-click unsubscribe: the appliance writes the header.
 */
export function sendBodyFor(content: BroadcastContent, to: string, rendered: RenderedContent): SendEmailBody {
  return {
    from: content.from,
    to: [to],
    ...(content.reply_to ? { reply_to: content.reply_to } : {}),
    subject: rendered.subject,
    ...(rendered.html !== null ? { html: rendered.html } : {}),
    ...(rendered.text !== null ? { text: rendered.text } : {}),
    tags: content.tags ?? {},
    headers: { 'List-Unsubscribe': AUTO_UNSUBSCRIBE },
  };
}

/** Content and template are one or the other, as for a send (the schema cannot say it). */
export function checkContent(content: BroadcastContent): void {
  const inline = content.subject !== undefined || content.html !== undefined || content.text !== undefined;
  if (content.template_id !== undefined) {
    if (inline)
      throw validationError(
        'template_id',
        'cannot be combined with subject, html or text: send either content or a template',
      );
    return;
  }
  if (content.template_version !== undefined)
    throw validationError('template_version', 'is only allowed with template_id');
  if (content.subject === undefined) throw validationError('subject', 'is required (or give a template_id)');
  if (content.html === undefined && content.text === undefined)
    throw validationError('html', 'html or text is required');
}
