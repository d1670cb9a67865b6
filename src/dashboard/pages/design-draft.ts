import type { TSchema } from '@sinclair/typebox';
import { BLOCK_SCHEMAS, BLOCK_TYPES, type BlockType } from '../../modules/sending/templates/design/design.schema.js';

// The design editor's blocks as a form holds them (every field a string, as typed) and as the API
// takes them. The fields of each block type come from the design's own schema, so that a block
// type or field added there shows in the editor without a change here. Pure.

/** A block as the form holds it: the type, its condition and each field's text. */
export interface DraftBlock {
  type: string;
  when: string;
  fields: Record<string, string>;
}

/** How a field is edited: one line, several lines, a choice, a number or a tick. */
export interface BlockField {
  key: string;
  kind: 'line' | 'lines' | 'choice' | 'integer' | 'tick';
  required: boolean;
  choices?: readonly string[];
  /** for lines: what each line holds */
  hint?: string;
}

const LONG_TEXT = 300;
const LINE_HINTS: Record<string, string> = {
  items: 'one item per line',
  links:
    'one link per line: network, a space, the URL (networks: website, x, facebook, instagram, linkedin, youtube, tiktok, github)',
  columns: 'one column per line: header | field | format (text, currency, number or date)',
};

export const isBlockType = (t: string): t is BlockType => (BLOCK_TYPES as readonly string[]).includes(t);

/** The fields of a block type, in the schema's order, without `type` and `when`. */
export function blockFields(type: BlockType): BlockField[] {
  const schema = BLOCK_SCHEMAS[type] as unknown as { properties: Record<string, TSchema>; required?: string[] };
  return Object.entries(schema.properties)
    .filter(([key]) => key !== 'type' && key !== 'when')
    .map(([key, s]) => {
      const required = schema.required?.includes(key) ?? false;
      if (s.type === 'array') return { key, kind: 'lines', required, hint: LINE_HINTS[key] };
      if (s.type === 'integer') return { key, kind: 'integer', required };
      if (s.type === 'boolean') return { key, kind: 'tick', required };
      if (Array.isArray(s.enum)) return { key, kind: 'choice', required, choices: s.enum as string[] };
      return { key, kind: (s.maxLength as number) > LONG_TEXT ? 'lines' : 'line', required };
    });
}

/** A block's field as the API takes it; undefined leaves it out (blank is absent). */
function apiValue(type: BlockType, f: BlockField, raw: string): unknown {
  const s = raw.trim();
  if (f.kind === 'tick') return s === 'true' ? true : undefined;
  if (s === '') return undefined;
  // not a number is sent as typed: the API refuses it naming the field
  if (f.kind === 'integer') return /^-?[0-9]{1,9}$/.test(s) ? Number(s) : s;
  if (f.kind !== 'lines' || !LINE_HINTS[f.key]) return raw;
  const lines = raw
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  if (f.key === 'links')
    return lines.map((l) => {
      const [network, ...url] = l.split(/\s+/);
      return { network, url: url.join(' ') };
    });
  if (f.key === 'columns' && type === 'table')
    return lines.map((l) => {
      const [header, field, format] = l.split('|').map((x) => x.trim());
      return { header, field: field ?? '', ...(format ? { format } : {}) };
    });
  return lines;
}

/** A form's block as the API's; a type the API does not know is sent as it is, to be refused naming it. */
export function apiBlock(b: DraftBlock): Record<string, unknown> {
  const out: Record<string, unknown> = { type: b.type };
  if (b.when.trim()) out.when = b.when.trim();
  if (!isBlockType(b.type)) return out;
  for (const f of blockFields(b.type)) {
    const v = apiValue(b.type, f, b.fields[f.key] ?? '');
    if (v !== undefined) out[f.key] = v;
  }
  return out;
}

/** An API block (a stored version's) as the form shows it. */
export function draftBlock(block: Record<string, unknown>): DraftBlock {
  const type = String(block.type);
  const fields: Record<string, string> = {};
  if (isBlockType(type))
    for (const f of blockFields(type)) {
      const v = block[f.key];
      if (v === undefined || v === null) continue;
      if (f.key === 'links' && Array.isArray(v))
        fields[f.key] = (v as Array<{ network: string; url: string }>).map((l) => `${l.network} ${l.url}`).join('\n');
      else if (f.key === 'columns' && Array.isArray(v))
        fields[f.key] = (v as Array<{ header: string; field: string; format?: string }>)
          .map((c) => [c.header, c.field, c.format ?? 'text'].join(' | '))
          .join('\n');
      else if (Array.isArray(v)) fields[f.key] = v.join('\n');
      else if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') fields[f.key] = String(v);
    }
  return { type, when: typeof block.when === 'string' ? block.when : '', fields };
}

/** A new block of a type, with the defaults a writer would otherwise look up. */
export function newBlock(type: BlockType): DraftBlock {
  const starts: Partial<Record<BlockType, Record<string, string>>> = {
    heading: { text: 'A heading' },
    text: { text: 'Some text.' },
    button: { label: 'Open', url: 'https://' },
    footer: { text: 'You receive this email because you have an account with us.' },
    spacer: { height: '24' },
  };
  return { type, when: '', fields: { ...(starts[type] ?? {}) } };
}

/** Field names of the form: `b2.url` is the third block's url. */
export const blockInput = (i: number, key: string) => `b${i}.${key}`;

/**
 * The form input an API field of a design names: `design.blocks[2].links[0].url` is `b2.links`,
 * `design.blocks[2]` the block's type, `design.accent` accent; null for no input of the design.
 */
export function designInputOf(apiField: string): string | null {
  const block = /^design\.blocks\[(\d+)\](?:\.([a-z_]+))?/.exec(apiField);
  if (block) return blockInput(Number(block[1]), block[2] ?? 'type');
  const top = /^design\.(accent|background|font)\b/.exec(apiField);
  if (top) return top[1];
  return apiField === 'design.blocks' || apiField === 'design' ? 'add_type' : null;
}
