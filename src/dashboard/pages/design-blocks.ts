import { html, type Html } from './html.js';
import type { FormError } from './form-errors.js';
import { BLOCK_TYPES } from '../../modules/sending/templates/design/design.schema.js';
import { blockFields, blockInput, isBlockType, type BlockField, type DraftBlock } from './design-draft.js';
import type { TemplateDraft } from './template-draft.js';

// The visual design editor's part of the template form (interface §4.3's blocks): the design's
// colours and font, each block with its fields, its condition and the buttons that move or remove
// it, and the control that adds one. Every button posts the whole form, so that it works without
// script; the page comes back with the block moved and nothing published.

const idOf = (name: string) => `f-${name.replace(/[^A-Za-z0-9_-]/g, '-')}`;

const LABELS: Record<string, string> = {
  url: 'URL',
  image_url: 'Image URL',
  button_url: 'Button URL',
  alt: 'Alt text',
  image_alt: 'Image alt text',
};
const label = (key: string) => LABELS[key] ?? key.charAt(0).toUpperCase() + key.slice(1).replace(/_/g, ' ');

/** An input's error attributes and message, when the error is about it. */
function errorOf(error: FormError | undefined, name: string): { attrs: Html; message: Html } {
  if (error?.field !== name) return { attrs: html``, message: html`` };
  return {
    attrs: html` aria-invalid="true" aria-describedby="${idOf(name)}-error"`,
    message: html`<p class="error" role="alert" id="${idOf(name)}-error">${error.message}</p>`,
  };
}

/** One labelled input of the form, by kind; `hint` is said under the label. */
export function field(
  name: string,
  text: string,
  value: string,
  error: FormError | undefined,
  o: { kind?: BlockField['kind'] | 'color'; choices?: readonly string[]; hint?: string; rows?: number } = {},
): Html {
  const id = idOf(name);
  const e = errorOf(error, name);
  const hint = o.hint ? html`<span class="hint" id="${id}-hint">${o.hint}</span>` : html``;
  const described = o.hint && error?.field !== name ? html` aria-describedby="${id}-hint"` : html``;
  const kind = o.kind ?? 'line';
  if (kind === 'tick')
    return html`<div class="field tick"><input type="checkbox" id="${id}" name="${name}" value="true"${value === 'true' ? html` checked` : ''}${e.attrs}> <label for="${id}">${text}</label>${e.message}</div>`;
  const input =
    kind === 'choice'
      ? html`<select id="${id}" name="${name}"${e.attrs}${described}>${(o.choices ?? []).map((c) => html`<option${c === value ? html` selected` : ''}>${c}</option>`)}</select>`
      : kind === 'lines'
        ? html`<textarea id="${id}" name="${name}" rows="${o.rows ?? 3}"${e.attrs}${described}>${value}</textarea>`
        : html`<input id="${id}" name="${name}" value="${value}"${kind === 'integer' ? html` inputmode="numeric"` : ''}${kind === 'color' ? html` class="color"` : ''}${e.attrs}${described}>`;
  return html`<div class="field"><label for="${id}">${text}</label>${hint}${input}${e.message}</div>`;
}

/** The design's colours, font and blocks, and the control that adds a block. */
export function designFields(d: TemplateDraft, error: FormError | undefined): Html {
  return html`<fieldset class="design-style"><legend>Look</legend>
${field('accent', 'Accent colour', d.accent, error, { kind: 'color', hint: 'as #RRGGBB' })}
${field('background', 'Background colour', d.background, error, { kind: 'color', hint: 'as #RRGGBB' })}
${field('font', 'Font', d.font, error, { kind: 'choice', choices: ['sans', 'serif'] })}
</fieldset>
<h2 id="h-blocks">Blocks</h2>
<ol class="blocks" aria-labelledby="h-blocks">${d.blocks.map((b, i) => blockFieldset(b, i, d.blocks.length, error))}</ol>
<div class="add-block">
${field('add_type', 'Block to add', 'text', error, { kind: 'choice', choices: BLOCK_TYPES })}
<button type="submit" name="op" value="add" class="secondary">Add block</button>
</div>`;
}

function blockFieldset(b: DraftBlock, i: number, count: number, error: FormError | undefined): Html {
  const n = i + 1;
  const fields = isBlockType(b.type) ? blockFields(b.type) : [];
  return html`<li><fieldset class="block"><legend>Block ${n}: ${b.type}</legend>
<input type="hidden" name="${blockInput(i, 'type')}" value="${b.type}">
${errorOf(error, blockInput(i, 'type')).message}
${fields.map((f) =>
  field(blockInput(i, f.key), `${label(f.key)}${f.required ? ' (required)' : ''}`, b.fields[f.key] ?? '', error, {
    kind: f.kind,
    choices: f.choices,
    hint: f.hint,
  }),
)}
${field(blockInput(i, 'when'), 'Show only when', b.when, error, { hint: "a condition, e.g. plan == 'pro'; blank: always" })}
<div class="block-actions">
${i > 0 ? html`<button type="submit" name="op" value="up:${i}" class="secondary">Move up<span class="visually-hidden"> block ${n}</span></button>` : ''}
${i < count - 1 ? html`<button type="submit" name="op" value="down:${i}" class="secondary">Move down<span class="visually-hidden"> block ${n}</span></button>` : ''}
<button type="submit" name="op" value="remove:${i}" class="secondary">Remove<span class="visually-hidden"> block ${n}</span></button>
</div>
</fieldset></li>`;
}
