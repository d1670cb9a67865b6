import type { Declared } from '../../modules/sending/templates/language/index.js';
import { validationError } from '../../lib/errors.js';
import { apiBlock, designInputOf, draftBlock, isBlockType, newBlock, type DraftBlock } from './design-draft.js';
import type { VersionJson } from './templates.js';

// A template version being written in the dashboard, as its form holds it: read from a posted form,
// changed by the editor's buttons (add, move, remove a block), turned into the API's body, and an
// API error's field turned back into the form's input. Pure.

export interface VariableRow {
  name: string;
  type: string;
  required: boolean;
}

export interface TranslationRow {
  lang: string;
  subject: string;
  html: string;
  text: string;
}

export interface TemplateDraft {
  /** source: subject, HTML and text as written; design: blocks */
  mode: 'source' | 'design';
  id: string;
  name: string;
  subject: string;
  html: string;
  text: string;
  accent: string;
  background: string;
  font: string;
  blocks: DraftBlock[];
  variables: VariableRow[];
  translations: TranslationRow[];
  /** a design's translations, carried through the editor as JSON (the editor changes the main design) */
  carried: string;
  /** sample variables for the preview, JSON */
  sample: string;
}

const MAX_BLOCKS = 100;
const MAX_ROWS = 200;

/** Sample values a preview can render with: each declared variable by its type. */
export function sampleFor(declared: Declared): string {
  const sample: Record<string, unknown> = {};
  const byType = { number: 1, boolean: true, array: [], object: {} } as Record<string, unknown>;
  for (const [name, spec] of Object.entries(declared)) sample[name] = byType[spec.type] ?? name;
  return JSON.stringify(sample, null, 2);
}

/** The draft a version starts (a new template's when there is none). */
export function draftFromVersion(v: VersionJson | null, mode: TemplateDraft['mode'], id = ''): TemplateDraft {
  const variables = Object.entries(v?.variables ?? {}).map(([name, s]) => ({ name, ...s }));
  const design = v?.design;
  const translations = Object.entries(v?.translations ?? {});
  return {
    mode,
    id,
    name: '',
    subject: v?.subject ?? '',
    html: v?.html ?? '',
    text: v?.text ?? '',
    accent: design?.accent ?? '#1a56db',
    background: design?.background ?? '#f4f5f7',
    font: design?.font ?? 'sans',
    blocks: design
      ? design.blocks.map((b) => draftBlock(b as Record<string, unknown>))
      : mode === 'design'
        ? [newBlock('heading'), newBlock('text'), newBlock('button')]
        : [],
    variables,
    translations:
      mode === 'source'
        ? translations.map(([lang, t]) => ({ lang, subject: t.subject ?? '', html: t.html ?? '', text: t.text ?? '' }))
        : [],
    carried: mode === 'design' && translations.length ? JSON.stringify(Object.fromEntries(translations)) : '',
    sample: sampleFor(v?.variables ?? {}),
  };
}

/** Rows `prefix0.key`, `prefix1.key`… of a form, until the first index without `prefix<i>.<first>`. */
function rows(form: URLSearchParams, prefix: string, first: string, max: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < max && form.has(`${prefix}${i}.${first}`); i++) out.push(i);
  return out;
}

/** The draft a posted editor form holds. */
export function draftFromForm(form: URLSearchParams): TemplateDraft {
  const get = (k: string) => form.get(k) ?? '';
  const blocks = rows(form, 'b', 'type', MAX_BLOCKS).map((i) => {
    const fields: Record<string, string> = {};
    for (const [k, v] of form) if (k.startsWith(`b${i}.`)) fields[k.slice(`b${i}.`.length)] = v;
    const { type = '', when = '', ...rest } = fields;
    return { type, when, fields: rest };
  });
  return {
    mode: get('mode') === 'design' ? 'design' : 'source',
    id: get('id').trim(),
    name: get('name').trim(),
    subject: get('subject'),
    html: get('html'),
    text: get('text'),
    accent: get('accent').trim(),
    background: get('background').trim(),
    font: get('font'),
    blocks,
    variables: rows(form, 'var', 'name', MAX_ROWS)
      .map((i) => ({
        name: get(`var${i}.name`).trim(),
        type: get(`var${i}.type`),
        required: form.has(`var${i}.required`),
      }))
      .filter((r) => r.name !== ''),
    translations: rows(form, 'tr', 'lang', 50)
      .map((i) => ({
        lang: get(`tr${i}.lang`).trim(),
        subject: get(`tr${i}.subject`),
        html: get(`tr${i}.html`),
        text: get(`tr${i}.text`),
      }))
      .filter((r) => r.lang !== ''),
    carried: get('carried'),
    sample: get('sample'),
  };
}

/** The draft after one of the editor's buttons: `add` (a block of `addType`), `up:2`, `down:2`, `remove:2`. */
export function applyOp(d: TemplateDraft, op: string, addType: string): TemplateDraft {
  const blocks = [...d.blocks];
  const [verb, at] = op.split(':');
  const i = Number(at);
  if (verb === 'add' && isBlockType(addType) && blocks.length < MAX_BLOCKS) blocks.push(newBlock(addType));
  else if (verb === 'up' && i > 0 && i < blocks.length) [blocks[i - 1], blocks[i]] = [blocks[i], blocks[i - 1]];
  else if (verb === 'down' && i >= 0 && i < blocks.length - 1) [blocks[i], blocks[i + 1]] = [blocks[i + 1], blocks[i]];
  else if (verb === 'remove' && i >= 0 && i < blocks.length) blocks.splice(i, 1);
  return { ...d, blocks };
}

/** The version's fields of the API's body (POST /v1/templates without id, name; the `template` of a draft render). */
export function versionBody(d: TemplateDraft): Record<string, unknown> {
  const variables = Object.fromEntries(
    d.variables.map((v) => [v.name, { type: v.type || 'string', required: v.required }]),
  );
  const body: Record<string, unknown> = { subject: d.subject, variables };
  if (d.mode === 'design') {
    const design: Record<string, unknown> = { blocks: d.blocks.map(apiBlock) };
    if (d.accent) design.accent = d.accent;
    if (d.background) design.background = d.background;
    if (d.font) design.font = d.font;
    body.design = design;
    if (d.carried.trim()) body.translations = carriedTranslations(d.carried);
    return body;
  }
  if (d.html.trim()) body.html = d.html;
  if (d.text.trim()) body.text = d.text;
  if (d.translations.length)
    body.translations = Object.fromEntries(
      d.translations.map((t) => [
        t.lang,
        Object.fromEntries(
          Object.entries({ subject: t.subject, html: t.html, text: t.text }).filter(([, v]) => v.trim()),
        ),
      ]),
    );
  return body;
}

function carriedTranslations(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    throw validationError('translations', 'the translations carried by the form are not JSON: open the editor again');
  }
}

/** The form input an API error's field is about (`template.` of a draft render stripped); null: above the form. */
export function inputOf(d: TemplateDraft, apiField: string | undefined): string | null {
  const f = apiField?.replace(/^template\./, '');
  if (!f) return null;
  if (f.startsWith('design')) return designInputOf(f);
  const root = f.split(/[.[]/)[0];
  if (['id', 'name', 'subject', 'html', 'text'].includes(root)) return root;
  const variable = /^variables\.([^.]+)/.exec(f);
  if (variable) {
    const i = d.variables.findIndex((v) => v.name === variable[1]);
    return `var${Math.max(0, i)}.name`;
  }
  const translation = /^translations\.([^.]+)(?:\.(subject|html|text))?/.exec(f);
  if (translation && d.mode === 'source') {
    const i = d.translations.findIndex((t) => t.lang === translation[1]);
    return `tr${Math.max(0, i)}.${translation[2] ?? 'lang'}`;
  }
  return null;
}
