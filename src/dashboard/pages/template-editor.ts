import { html, type Html } from './html.js';
import { designFields, field } from './design-blocks.js';
import { formMessage, type FormError } from './form-errors.js';
import { BASE, csrfField, layout } from './layout.js';
import { templateUrl } from './templates.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';
import { VARIABLE_TYPES } from '../../modules/sending/templates/language/index.js';
import type { TemplateDraft } from './template-draft.js';

// The editor of a template version: a new template, or the next version of one; its source
// (subject, HTML, text, translations) or its visual design; its variables; and beside it the
// preview of the draft, rendered by POST /v1/templates/render into a sandboxed frame (the
// Preview button posts the form into the frame; the script presses it as the form is typed in).

export const PREVIEW_PATH = `${BASE}/templates/+preview`;
const BLANK_ROWS = 2;

export interface EditorOptions {
  /** where the form posts: its buttons come back there */
  action: string;
  /** the template's name when this is its next version; null for a new template */
  templateName: string | null;
  templateId?: string;
  error?: FormError;
}

export function templateEditorPage(session: Session, d: TemplateDraft, o: EditorOptions): Html {
  const what = d.mode === 'design' ? 'design' : 'template';
  const title = o.templateName ? `New version of ${o.templateName}` : `New ${what}`;
  return layout(
    { title, section: '/templates', session },
    html`<p class="crumbs"><a href="${BASE}/templates">Templates</a>${o.templateId ? html` › <a href="${templateUrl(o.templateId)}">${o.templateName}</a>` : ''}</p>
<h1>${title}</h1>
<form method="post" action="${o.action}" class="editor" data-frame-preview="preview" novalidate>
${csrfField(session)}
<input type="hidden" name="mode" value="${d.mode}">
${d.carried ? html`<input type="hidden" name="carried" value="${d.carried}">` : ''}
<div class="editor-grid">
<div class="editor-fields">
<div class="actions">
<button type="submit" name="op" value="preview" formaction="${PREVIEW_PATH}" formtarget="template-frame" class="secondary" data-preview-button>Preview</button>
<button type="submit" name="op" value="publish">Publish</button>
</div>
${formMessage(o.error)}
${o.templateName ? html`<input type="hidden" name="id" value="${d.id}">` : html`${field('id', 'Id (required)', d.id, o.error, { hint: 'what sends name: lowercase letters, digits, - and _' })}${field('name', 'Name', d.name, o.error)}`}
${field('subject', 'Subject (required)', d.subject, o.error, { hint: 'may hold {{placeholders}}' })}
${d.mode === 'design' ? designFields(d, o.error) : sourceFields(d, o.error)}
${variableRows(d, o.error)}
${field('sample', 'Sample variables for the preview', d.sample, o.error, { kind: 'lines', rows: 4, hint: 'JSON, as a send gives them' })}
${d.carried ? html`<p class="muted">This version's translations (${Object.keys(JSON.parse(d.carried) as object).join(', ')}) are kept as they are: change them through the API.</p>` : ''}
</div>
<section class="editor-preview" aria-labelledby="h-draft-preview">
<h2 id="h-draft-preview">Preview</h2>
<iframe name="template-frame" title="Preview of the draft" sandbox src="about:blank"></iframe>
<p class="muted">Press Preview to see the draft with the sample variables; nothing is published until you press Publish.</p>
</section>
</div>
</form>`,
  );
}

function sourceFields(d: TemplateDraft, error: FormError | undefined): Html {
  const rows = [...d.translations, { lang: '', subject: '', html: '', text: '' }];
  return html`${field('html', 'HTML', d.html, error, { kind: 'lines', rows: 12 })}
${field('text', 'Text', d.text, error, { kind: 'lines', rows: 6, hint: 'blank: made from the HTML' })}
<fieldset class="rows"><legend>Translations</legend>
<p class="hint">A language tag (de, pt-BR) and what differs; what a translation leaves blank comes from the main version.</p>
${rows.map(
  (t, i) => html`<div class="row-group">
${field(`tr${i}.lang`, `Language ${i + 1}`, t.lang, error)}
${field(`tr${i}.subject`, `Subject in language ${i + 1}`, t.subject, error)}
${field(`tr${i}.html`, `HTML in language ${i + 1}`, t.html, error, { kind: 'lines', rows: 4 })}
${field(`tr${i}.text`, `Text in language ${i + 1}`, t.text, error, { kind: 'lines', rows: 3 })}
</div>`,
)}
</fieldset>`;
}

function variableRows(d: TemplateDraft, error: FormError | undefined): Html {
  const rows = [
    ...d.variables,
    ...Array.from({ length: BLANK_ROWS }, () => ({ name: '', type: 'string', required: true })),
  ];
  return html`<fieldset class="rows"><legend>Variables</legend>
<p class="hint">Every placeholder must be declared here. Blank rows are left out.</p>
${rows.map(
  (v, i) => html`<div class="row-group inline">
${field(`var${i}.name`, `Variable ${i + 1}`, v.name, error)}
${field(`var${i}.type`, `Type of variable ${i + 1}`, v.type, error, { kind: 'choice', choices: VARIABLE_TYPES })}
${field(`var${i}.required`, `Variable ${i + 1} is required`, v.required ? 'true' : '', error, { kind: 'tick' })}
</div>`,
)}
</fieldset>`;
}
