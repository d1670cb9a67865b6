import { parseAddress } from '../../../lib/address.js';
import { checkValue, type ContactProperty, type PropertyValue } from './contact-properties.js';

// What a CSV of contacts means (posthorn contacts import; docs/contacts.md). Pure.

const FIELDS = ['email', 'first_name', 'last_name', 'unsubscribed'] as const;

/** A column: one of the contact's fields, or a declared property. */
export type Column = { field: (typeof FIELDS)[number] } | { property: ContactProperty };

/** The header row read: each column's meaning, or why the file cannot be imported (before any row is). */
export function importColumns(
  header: string[],
  declared: ReadonlyMap<string, ContactProperty>,
): { ok: true; columns: Column[] } | { ok: false; message: string } {
  const names = header.map((h) => h.trim().toLowerCase());
  if (!names.includes('email')) return { ok: false, message: 'the header row has no email column' };
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) return { ok: false, message: `the column ${twice} is given twice` };
  const columns: Column[] = [];
  for (const n of names) {
    if ((FIELDS as readonly string[]).includes(n))
      columns.push({ field: n as Column extends { field: infer F } ? F : never });
    else if (declared.has(n)) columns.push({ property: declared.get(n)! });
    else
      return {
        ok: false,
        message: `the column ${n || '(empty)'} is neither a contact field (${FIELDS.join(', ')}) nor a declared property (${[...declared.keys()].join(', ') || 'none yet'}): declare it with POST /v1/contact-properties, or remove the column`,
      };
  }
  return { ok: true, columns };
}

export interface ImportedRow {
  email: string;
  first_name?: string;
  last_name?: string;
  unsubscribed?: boolean;
  properties: Record<string, PropertyValue>;
}

const TRUE = new Set(['true', 'yes', 'y', '1']);
const FALSE = new Set(['false', 'no', 'n', '0']);

/** A cell's text as a value of the type: numbers and booleans are read from text (a signup form's fields are text too). */
export function cellValue(
  type: ContactProperty['type'],
  text: string,
): { ok: true; value: PropertyValue } | { ok: false; reason: string } {
  const t = text.trim();
  if (type === 'number')
    return t !== '' && Number.isFinite(Number(t))
      ? { ok: true, value: Number(t) }
      : { ok: false, reason: 'must be a number' };
  if (type === 'boolean')
    return TRUE.has(t.toLowerCase())
      ? { ok: true, value: true }
      : FALSE.has(t.toLowerCase())
        ? { ok: true, value: false }
        : { ok: false, reason: 'must be true or false' };
  return checkValue(type, type === 'date' ? t : text);
}

/** One data row as a contact's fields, or why it is refused. An empty cell sets nothing. */
export function importRow(
  fields: string[],
  columns: Column[],
): { ok: true; row: ImportedRow } | { ok: false; reason: string } {
  if (fields.length !== columns.length)
    return { ok: false, reason: `has ${fields.length} fields, the header has ${columns.length}` };
  const row: ImportedRow = { email: '', properties: {} };
  for (const [i, col] of columns.entries()) {
    const text = fields[i];
    if (text.trim() === '' && !('field' in col && col.field === 'email')) continue;
    if ('property' in col) {
      const v = cellValue(col.property.type, text);
      if (!v.ok) return { ok: false, reason: `${col.property.key} ${v.reason}` };
      row.properties[col.property.key] = v.value;
    } else if (col.field === 'email') {
      const a = parseAddress(text);
      if (!a.ok) return { ok: false, reason: `email ${a.reason}` };
      row.email = a.value.address.toLowerCase();
    } else if (col.field === 'unsubscribed') {
      const v = cellValue('boolean', text);
      if (!v.ok) return { ok: false, reason: `unsubscribed ${v.reason}` };
      row.unsubscribed = v.value as boolean;
    } else {
      if (text.length > 200 || text.includes('\0'))
        return { ok: false, reason: `${col.field} must be at most 200 characters, without NUL` };
      row[col.field] = text;
    }
  }
  return { ok: true, row };
}
