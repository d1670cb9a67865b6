import { html, type Html } from './html.js';
import { BASE, csrfField, layout, time } from './layout.js';
import { templateActions, type ActionsState } from './template-actions.js';
import { previewForm, previewResult, type PreviewState } from './template-preview.js';
import { templateUrl, type TemplateJson, type VersionJson } from './templates.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';
import type { Design } from '../../modules/sending/templates/design/design.schema.js';
import type { Declared } from '../../modules/sending/templates/language/index.js';

// A template's page: what it is, its versions, the source of the one shown, and its preview.

export interface TemplatePageOptions {
  /** the version shown (its source and the preview's) */
  version: VersionJson;
  preview?: PreviewState;
  /** a version just published by a restore */
  restored?: number;
  /** a version just published from the editor */
  published?: number;
  /** what an action just did (`?done=`) */
  done?: string;
  actions?: ActionsState;
}

const DONE: Record<string, string> = {
  split: 'Split saved: sends that name no version are split between these versions.',
  'split-off': 'Split turned off: sends that name no version get the latest version.',
};

export function templatePage(session: Session, t: TemplateJson, o: TemplatePageOptions): Html {
  const restored = t.versions.find((v) => v.version === o.restored && v.restored_from !== null);
  return layout(
    { title: t.name, section: '/templates', session },
    html`<p class="crumbs"><a href="${BASE}/templates">Templates</a></p>
<h1>${t.name}</h1>
${o.published && t.versions.some((v) => v.version === o.published) ? html`<p class="note" role="status">Version ${o.published} is published.${o.published === t.latest_version ? ' Sends that name no version get it now.' : ''}</p>` : ''}
${o.done && DONE[o.done] ? html`<p class="note" role="status">${DONE[o.done]}</p>` : ''}
${restored ? html`<p class="note" role="status">Version ${restored.version} is published, a copy of version ${restored.restored_from}. Sends that name no version get it now.</p>` : ''}
<dl class="facts">
  <div><dt>Id</dt><dd><code>${t.id}</code> <button type="button" class="link" data-copy="${t.id}">Copy</button></dd></div>
  <div><dt>Latest version</dt><dd>${t.latest_version}</dd></div>
  ${t.category ? html`<div><dt>Category</dt><dd>${t.category}</dd></div>` : ''}
  ${t.split ? html`<div><dt>Split</dt><dd>${t.split.map((s) => `version ${s.version}: ${s.percent}%`).join(', ')}</dd></div>` : ''}
  <div><dt>Created</dt><dd>${time(t.created_at)}</dd></div>
  <div><dt>Updated</dt><dd>${time(t.updated_at)}</dd></div>
</dl>
${templateActions(session, t, o.actions ?? {})}
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
  const languages = Object.entries(v.translations);
  return html`<section aria-labelledby="h-source">
<h2 id="h-source">Version ${v.version}${v.version === t.latest_version ? ' (latest)' : ''}</h2>
<dl class="details"><div><dt>Subject</dt><dd><code>${v.subject}</code></dd></div>
${languages.length ? html`<div><dt>Translations</dt><dd>${languages.map(([tag, tr]) => html`<span class="tag">${tag}: ${Object.keys(tr).join(', ')}</span> `)}</dd></div>` : ''}</dl>
<h3>Variables</h3>
${variablesTable(v.variables)}
${v.design ? html`<h3>Design</h3>${designSummary(v.design)}` : ''}
${v.html !== null ? html`<h3>HTML source</h3><pre class="text-part">${v.html}</pre>` : ''}
${v.text !== null ? html`<h3>Text source</h3><pre class="text-part">${v.text}</pre>` : ''}
${v.design === null && v.html !== null && v.text === null ? html`<p class="muted">The text part is made from the HTML.</p>` : ''}
</section>`;
}

function variablesTable(declared: Declared): Html {
  const vars = Object.entries(declared);
  return vars.length
    ? html`<div class="scroll"><table><thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Required</th></tr></thead>
<tbody>${vars.map(([name, spec]) => html`<tr><td><code>${name}</code></td><td>${spec.type}</td><td>${spec.required ? 'yes' : 'no'}</td></tr>`)}</tbody></table></div>`
    : html`<p class="empty">This version declares no variables.</p>`;
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
    const text = label(b);
    return html`<li><strong>${b.type}</strong>${text ? `: ${text}` : ''}${b.when ? html` <span class="muted">(when <code>${b.when}</code>)</span>` : ''}</li>`;
  })}</ol>
<p class="muted">The HTML and text parts are made from the design: the preview shows them.</p>`;
}
