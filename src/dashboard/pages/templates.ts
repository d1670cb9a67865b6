import { html, queryString, type Html } from './html.js';
import { BASE, csrfField, layout, time } from './layout.js';
import type { Session } from '../../modules/sessions/sessions.service.js';
import type { Design } from '../../modules/templates/design/design.schema.js';
import type { Declared, VariableType } from '../../modules/templates/language/index.js';

// The API's JSON shapes (templates.presenter.ts), as the pages read them.
export interface TemplateSummaryJson {
  id: string;
  name: string;
  latest_version: number;
  versions: number;
  created_at: string;
}

export interface VersionJson {
  template_id: string;
  version: number;
  subject: string;
  html: string | null;
  text: string | null;
  design: Design | null;
  translations: Record<string, { subject?: string; html?: string; text?: string; design?: Design }>;
  variables: Declared;
  restored_from: number | null;
  created_at: string;
}

export interface TemplateJson {
  id: string;
  name: string;
  category: string | null;
  split: Array<{ version: number; percent: number }> | null;
  latest_version: number;
  created_at: string;
  updated_at: string;
  /** newest first */
  versions: VersionJson[];
}

export interface RenderedJson {
  version: number;
  language: string | null;
  subject: string;
  html: string | null;
  text: string | null;
}

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

export const templateUrl = (id: string, rest = '') => `${BASE}/templates/${encodeURIComponent(id)}${rest}`;

/** A form field's value read as the version declares the variable (as `posthorn template render --var` does). */
function readValue(raw: string, type: VariableType): { value: unknown } | { error: string } {
  if (type === 'string') return { value: raw };
  const s = raw.trim();
  if (type === 'number') return Number.isFinite(Number(s)) ? { value: Number(s) } : { error: `is declared as a number: '${raw}' is not one` };
  if (type === 'boolean') return s === 'true' || s === 'false' ? { value: s === 'true' } : { error: 'is declared as a boolean: true or false' };
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
export function previewVariables(form: URLSearchParams, declared: Declared): { values: Record<string, string>; variables: Record<string, unknown>; error?: RenderError } {
  const values: Array<[string, string]> = [];
  const variables: Array<[string, unknown]> = [];
  let error: RenderError | undefined;
  for (const [name, spec] of Object.entries(declared)) {
    const raw = form.get(`var.${name}`) ?? '';
    values.push([name, raw]);
    if (raw.trim() === '') continue;
    const read = readValue(raw, spec.type);
    if ('value' in read) variables.push([name, read.value]);
    else error ??= { code: 'validation_error', field: `variables.${name}`, message: `variables.${name}: ${read.error}` };
  }
  // fromEntries, not assignment: a variable may be called __proto__
  return { values: Object.fromEntries(values), variables: Object.fromEntries(variables), ...(error ? { error } : {}) };
}

export function templateListPage(session: Session, templates: TemplateSummaryJson[]): Html {
  return layout(
    { title: 'Templates', section: '/templates', session },
    html`<h1>Templates</h1>
${
  templates.length
    ? html`<div class="scroll"><table>
<caption class="visually-hidden">Templates, newest first</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">Latest version</th><th scope="col">Created</th></tr></thead>
<tbody>${templates.map((t) => html`<tr><td><a href="${templateUrl(t.id)}">${t.name}</a></td><td><code>${t.id}</code></td><td>${t.latest_version}</td><td>${time(t.created_at)}</td></tr>`)}</tbody>
</table></div>`
    : html`<p class="empty">No templates yet. Publish one with <code>POST /v1/templates</code>.</p>`
}`,
  );
}

export interface TemplatePageOptions {
  /** the version shown (its source and the preview's) */
  version: VersionJson;
  preview?: PreviewState;
  /** a version just published by a restore */
  restored?: number;
}

export function templatePage(session: Session, t: TemplateJson, o: TemplatePageOptions): Html {
  const restored = t.versions.find((v) => v.version === o.restored && v.restored_from !== null);
  return layout(
    { title: t.name, section: '/templates', session },
    html`<p class="crumbs"><a href="${BASE}/templates">Templates</a></p>
<h1>${t.name}</h1>
${restored ? html`<p class="note" role="status">Version ${restored.version} is published, a copy of version ${restored.restored_from}. Sends that name no version get it now.</p>` : ''}
<dl class="facts">
  <div><dt>Id</dt><dd><code>${t.id}</code> <button type="button" class="link" data-copy="${t.id}">Copy</button></dd></div>
  <div><dt>Latest version</dt><dd>${t.latest_version}</dd></div>
  ${t.category ? html`<div><dt>Category</dt><dd>${t.category}</dd></div>` : ''}
  ${t.split ? html`<div><dt>Split</dt><dd>${t.split.map((s) => `version ${s.version}: ${s.percent}%`).join(', ')}</dd></div>` : ''}
  <div><dt>Created</dt><dd>${time(t.created_at)}</dd></div>
  <div><dt>Updated</dt><dd>${time(t.updated_at)}</dd></div>
</dl>
${versionsTable(session, t, o.version.version)}
${versionSource(t, o.version)}
<section aria-labelledby="h-preview">
<h2 id="h-preview">Preview</h2>
${previewForm(session, t, o.version, o.preview)}
<div id="preview-result" aria-live="polite">${o.preview ? previewResult(t, o.preview) : ''}</div>
</section>`,
  );
}

function versionsTable(session: Session, t: TemplateJson, shown: number): Html {
  const row = (v: VersionJson) => html`<tr>
  <td><a href="${templateUrl(t.id, `?version=${v.version}`)}"${v.version === shown ? html` aria-current="true"` : ''}>Version ${v.version}</a>${v.version === t.latest_version ? html` <span class="tag">latest</span>` : ''}</td>
  <td>${time(v.created_at)}</td>
  <td>${v.subject}</td>
  <td>${v.restored_from !== null ? `copy of version ${v.restored_from}` : ''}</td>
  <td>${
    v.version === t.latest_version
      ? ''
      : html`<form method="post" action="${templateUrl(t.id, '/restore')}">${csrfField(session)}<input type="hidden" name="version" value="${v.version}"><button type="submit" class="secondary">Restore version ${v.version}</button></form>`
  }</td>
</tr>`;
  return html`<section aria-labelledby="h-versions">
<h2 id="h-versions">Versions</h2>
<p class="muted">Versions never change: restoring one publishes a copy of it as the newest version.</p>
<div class="scroll"><table>
<thead><tr><th scope="col">Version</th><th scope="col">Published</th><th scope="col">Subject</th><th scope="col">Restored from</th><th scope="col">Restore</th></tr></thead>
<tbody>${t.versions.map(row)}</tbody>
</table></div>
</section>`;
}

function versionSource(t: TemplateJson, v: VersionJson): Html {
  const vars = Object.entries(v.variables);
  const languages = Object.entries(v.translations);
  return html`<section aria-labelledby="h-source">
<h2 id="h-source">Version ${v.version}${v.version === t.latest_version ? ' (latest)' : ''}</h2>
<dl class="details"><div><dt>Subject</dt><dd><code>${v.subject}</code></dd></div>
${languages.length ? html`<div><dt>Translations</dt><dd>${languages.map(([tag, tr]) => html`<span class="tag">${tag}: ${Object.keys(tr).join(', ')}</span> `)}</dd></div>` : ''}</dl>
<h3>Variables</h3>
${
  vars.length
    ? html`<div class="scroll"><table><thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Required</th></tr></thead>
<tbody>${vars.map(([name, spec]) => html`<tr><td><code>${name}</code></td><td>${spec.type}</td><td>${spec.required ? 'yes' : 'no'}</td></tr>`)}</tbody></table></div>`
    : html`<p class="empty">This version declares no variables.</p>`
}
${v.design ? html`<h3>Design</h3>${designSummary(v.design)}` : ''}
${v.html !== null ? html`<h3>HTML source</h3><pre class="text-part">${v.html}</pre>` : ''}
${v.text !== null ? html`<h3>Text source</h3><pre class="text-part">${v.text}</pre>` : ''}
${v.design === null && v.html !== null && v.text === null ? html`<p class="muted">The text part is made from the HTML.</p>` : ''}
</section>`;
}

const BLOCK_LABELS = ['text', 'label', 'name', 'title', 'question', 'headline', 'code'];

function designSummary(d: Design): Html {
  const label = (b: Record<string, unknown>) => {
    const k = BLOCK_LABELS.find((key) => typeof b[key] === 'string' && b[key] !== '');
    const s = k ? (b[k] as string) : '';
    return s.length > 80 ? `${s.slice(0, 79)}…` : s;
  };
  return html`<dl class="details">
<div><dt>Accent</dt><dd><code>${d.accent ?? '#1a56db'}</code></dd></div>
<div><dt>Background</dt><dd><code>${d.background ?? '#f4f5f7'}</code></dd></div>
<div><dt>Font</dt><dd>${d.font ?? 'sans'}</dd></div>
</dl>
<ol aria-label="Blocks">${d.blocks.map((b) => {
    const text = label(b as Record<string, unknown>);
    return html`<li><strong>${b.type}</strong>${text ? `: ${text}` : ''}${b.when ? html` <span class="muted">(when <code>${b.when}</code>)</span>` : ''}</li>`;
  })}</ol>
<p class="muted">The HTML and text parts are made from the design: the preview shows them.</p>`;
}

function variableInput(name: string, type: VariableType, value: string, invalid: boolean): Html {
  const attrs = html` id="v-${name}" name="var.${name}"${invalid ? html` aria-invalid="true" aria-describedby="preview-error"` : ''}`;
  if (type === 'string') return html`<input${attrs} type="text" value="${value}">`;
  if (type === 'number') return html`<input${attrs} type="number" step="any" value="${value}">`;
  if (type === 'boolean')
    return html`<select${attrs}>${['', 'true', 'false'].map((o) => html`<option value="${o}"${o === value ? html` selected` : ''}>${o || '(not set)'}</option>`)}</select>`;
  return html`<textarea${attrs} rows="3" spellcheck="false" placeholder="${type === 'array' ? '[ … ] as JSON' : '{ … } as JSON'}">${value}</textarea>`;
}

function previewForm(session: Session, t: TemplateJson, v: VersionJson, p: PreviewState | undefined): Html {
  const badField = p?.error?.field;
  const languages = Object.keys(v.translations);
  return html`<form class="card" method="post" action="${templateUrl(t.id, '/preview#preview-result')}" data-preview-form="${templateUrl(t.id, '/preview/part')}">
${csrfField(session)}<input type="hidden" name="version" value="${v.version}">
<p class="muted">Renders version ${v.version} as a send would, with its variable checks. Numbers, true/false, and JSON for lists and objects are read as the version declares them; an empty field leaves its variable out.</p>
${Object.entries(v.variables).map(
  ([name, spec]) => html`<div><label for="v-${name}">${name} <span class="muted">(${spec.type}${spec.required ? ', required' : ''})</span></label>
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
  const frameUrl = templateUrl(t.id, `/preview/html${queryString({ version: String(r.version), language: p.language, variables: JSON.stringify(p.variables ?? {}) })}`);
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
