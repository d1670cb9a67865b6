import { html, queryString, type Html } from './html.js';
import { csrfField } from './layout.js';
import { templateUrl, type RenderedJson, type TemplateJson, type VersionJson } from './templates.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';
import type { Declared, VariableType } from '../../modules/sending/templates/language/index.js';

// A template version's preview: its form, the form read as the variables of a render, and what the
// render made of them.

export interface RenderError {
  code: string;
  field?: string | undefined;
  message: string;
}

/** The preview form as posted: what was typed (to show again), and what the API rendered from it or why it refused. */
export interface PreviewState {
  values: Record<string, string>;
  language: string;
  variables?: Record<string, unknown>;
  result?: RenderedJson;
  error?: RenderError;
}

/** Longer than this, the rendered HTML's URL (which carries the variables) is not used for a frame: its source is shown instead. */
export const MAX_FRAME_URL = 8000;

/** A form field's value read as the version declares the variable (as `posthorn template render --var` does). */
function readValue(raw: string, type: VariableType): { value: unknown } | { error: string } {
  if (type === 'string') return { value: raw };
  const s = raw.trim();
  if (type === 'number')
    return Number.isFinite(Number(s))
      ? { value: Number(s) }
      : { error: `is declared as a number: '${raw}' is not one` };
  if (type === 'boolean')
    return s === 'true' || s === 'false'
      ? { value: s === 'true' }
      : { error: 'is declared as a boolean: true or false' };
  try {
    return { value: JSON.parse(s) };
  } catch {
    return { error: `is declared as ${type === 'array' ? 'an array' : 'an object'}: give it as JSON` };
  }
}

/**
 * The preview form's fields (`var.<name>`) as the variables of a render:
 * a blank field leaves its variable out; the first value that is not of its
 * declared kind (a number, true/false, JSON) is an error naming the variable.
 */
export function previewVariables(
  form: URLSearchParams,
  declared: Declared,
): { values: Record<string, string>; variables: Record<string, unknown>; error?: RenderError } {
  const values: Array<[string, string]> = [];
  const variables: Array<[string, unknown]> = [];
  let error: RenderError | undefined;
  for (const [name, spec] of Object.entries(declared)) {
    const raw = form.get(`var.${name}`) ?? '';
    values.push([name, raw]);
    if (raw.trim() === '') continue;
    const read = readValue(raw, spec.type);
    if ('value' in read) variables.push([name, read.value]);
    else
      error ??= { code: 'validation_error', field: `variables.${name}`, message: `variables.${name}: ${read.error}` };
  }
  // fromEntries, not assignment: a variable may be called __proto__
  return { values: Object.fromEntries(values), variables: Object.fromEntries(variables), ...(error ? { error } : {}) };
}

function variableInput(name: string, type: VariableType, value: string, invalid: boolean): Html {
  const attrs = html` id="v-${name}" name="var.${name}"${invalid ? html` aria-invalid="true" aria-describedby="preview-error"` : ''}`;
  if (type === 'string') return html`<input${attrs} type="text" value="${value}">`;
  if (type === 'number') return html`<input${attrs} type="number" step="any" value="${value}">`;
  if (type === 'boolean')
    return html`<select${attrs}>${['', 'true', 'false'].map((o) => html`<option value="${o}"${o === value ? html` selected` : ''}>${o || '(not set)'}</option>`)}</select>`;
  return html`<textarea${attrs} rows="3" spellcheck="false" placeholder="${type === 'array' ? '[ … ] as JSON' : '{ … } as JSON'}">${value}</textarea>`;
}

export function previewForm(session: Session, t: TemplateJson, v: VersionJson, p: PreviewState | undefined): Html {
  const badField = p?.error?.field;
  const languages = Object.keys(v.translations);
  return html`<form class="card" method="post" action="${templateUrl(t.id, '/preview#preview-result')}" data-preview-form="${templateUrl(t.id, '/preview/part')}">
${csrfField(session)}<input type="hidden" name="version" value="${v.version}">
<p class="muted">Renders version ${v.version} as a send would, with its variable checks. Numbers, true/false, and JSON for lists and objects are read as the version declares them; an empty field leaves its variable out.</p>
${Object.entries(v.variables).map(
  ([
    name,
    spec,
  ]) => html`<div><label for="v-${name}">${name} <span class="muted">(${spec.type}${spec.required ? ', required' : ''})</span></label>
${variableInput(name, spec.type, p?.values[name] ?? '', badField === `variables.${name}`)}</div>`,
)}
<div><label for="v-language">Language <span class="muted">(optional${languages.length ? `; translations: ${languages.join(', ')}` : ''})</span></label>
<input id="v-language" name="language" type="text" value="${p?.language ?? ''}" placeholder="e.g. de-DE"${badField === 'language' ? html` aria-invalid="true" aria-describedby="preview-error"` : ''}></div>
<button type="submit">Preview</button>
</form>`;
}

/** What the preview rendered, or why it could not (also served alone, for a preview that follows typing). */
export function previewResult(t: TemplateJson, p: PreviewState): Html {
  if (p.error) return html`<p class="error" id="preview-error" role="alert">Cannot render: ${p.error.message}</p>`;
  const r = p.result;
  if (!r) return html``;
  const frameUrl = templateUrl(
    t.id,
    `/preview/html${queryString({ version: String(r.version), language: p.language, variables: JSON.stringify(p.variables ?? {}) })}`,
  );
  return html`<h3>Subject</h3>
<p class="rendered-subject">${r.subject}</p>
<p class="muted">Version ${r.version}, ${r.language ? `translation ${r.language}` : 'the main version (no translation)'}.</p>
${
  r.html === null
    ? ''
    : frameUrl.length <= MAX_FRAME_URL
      ? html`<h3>HTML</h3><iframe class="preview" title="The rendered HTML, with scripts and remote content blocked" sandbox src="${frameUrl}"></iframe>`
      : html`<h3>HTML</h3><p class="muted">The variables are too long to show the HTML in a frame; its source:</p><pre class="text-part">${r.html}</pre>`
}
${r.text !== null ? html`<h3>Text</h3><pre class="text-part">${r.text}</pre>` : ''}`;
}
