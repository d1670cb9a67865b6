import {
  checkWrittenUrl,
  compileCondition,
  compileTemplate,
  TemplateError,
  type Declared,
  type UrlUse,
} from '../language/index.js';
import type { Block, Design } from './design.schema.js';

// At publish, every field of a design that can hold placeholders is compiled
// on its own, so that a mistake is reported against its block field
// (`design.blocks[2].text line 1, column 9: …`), never against a line of
// the HTML generated from it.

/** A block's `when`, or null when it always shows (absent or blank). */
export const conditionOf = (b: Block): string | null => (b.when && b.when.trim() ? b.when.trim() : null);

/** Fields whose values are settings, not text: they never hold placeholders. */
const SETTINGS = new Set(['type', 'when', 'align', 'image_side', 'rows', 'currency', 'network', 'field', 'format']);

function checkValue(value: unknown, field: string, declared: Declared): void {
  if (typeof value === 'string') compileTemplate(value, field, declared);
  else if (Array.isArray(value)) value.forEach((v, j) => checkValue(v, `${field}[${j}]`, declared));
  else if (value !== null && typeof value === 'object') checkFields(value as Record<string, unknown>, field, declared);
}

function checkFields(object: Record<string, unknown>, at: string, declared: Declared): void {
  for (const [name, value] of Object.entries(object)) {
    if (!SETTINGS.has(name)) checkValue(value, `${at}.${name}`, declared);
  }
}

/** A table's rows name a declared array; the fields of its columns are keys of each item, declared by nobody. */
function checkRows(block: Extract<Block, { type: 'table' }>, at: string, declared: Declared): void {
  const spec = Object.hasOwn(declared, block.rows) ? declared[block.rows] : undefined;
  if (!spec) throw new TemplateError(`${at}.rows`, 1, 1, `variable '${block.rows}' is not declared under variables`);
  if (spec.type !== 'array')
    throw new TemplateError(
      `${at}.rows`,
      1,
      1,
      `variable '${block.rows}' is declared as ${spec.type}: a table needs an array`,
    );
}

/** The fields of a block that become an href or a src, by their path under the block. */
export function urlFieldsOf(b: Block): Array<{ field: string; url: string; use: UrlUse }> {
  const f = (field: string, url: string | undefined, use: UrlUse) => (url ? [{ field, url, use }] : []);
  switch (b.type) {
    case 'button':
      return f('url', b.url, 'link');
    case 'image':
    case 'logo':
      return [...f('url', b.url, 'image'), ...f('link', b.link, 'link')];
    case 'columns':
      return [...f('image_url', b.image_url, 'image'), ...f('button_url', b.button_url, 'link')];
    case 'product':
      return [...f('image_url', b.image_url, 'image'), ...f('url', b.url, 'link')];
    case 'social':
      return b.links.flatMap((l, j) => f(`links[${j}].url`, l.url, 'link'));
    case 'signature':
      return f('website', b.website, 'link');
    case 'event':
    case 'rating':
      return f('url', b.url, 'link');
    case 'heading':
    case 'text':
    case 'divider':
    case 'spacer':
    case 'footer':
    case 'discount':
    case 'list':
    case 'quote':
    case 'table':
      return [];
  }
}

/** Throws the TemplateError of the first mistake, in block order. */
export function checkDesign(design: Design, declared: Declared): void {
  design.blocks.forEach((block, i) => {
    const at = `design.blocks[${i}]`;
    const when = conditionOf(block);
    if (when !== null) compileCondition(block.when!, `${at}.when`, declared);
    checkFields(block, at, declared);
    for (const u of urlFieldsOf(block)) checkWrittenUrl(u.url, `${at}.${u.field}`, declared, u.use);
    if (block.type === 'table') checkRows(block, at, declared);
  });
}
