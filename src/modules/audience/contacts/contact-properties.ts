// Contact properties (issue 27; docs/contacts.md): declared per project, each with a type; a
// contact's values are checked against them. Pure.

export const PROPERTY_TYPES = ['string', 'number', 'boolean', 'date'] as const;
export type PropertyType = (typeof PROPERTY_TYPES)[number];
export type PropertyValue = string | number | boolean;

export interface ContactProperty {
  projectId: string;
  key: string;
  type: PropertyType;
  fallback: PropertyValue | null;
  createdAt: number;
}

export const PROPERTY_KEY = /^[a-z_][a-z0-9_]{0,49}$/;
/**
 * Keys a property may not take: a contact's own fields, which a segment's
 * filter names (a property of that name would hide the field), and the
 * names JavaScript objects carry already.
 */
export const RESERVED_KEYS = new Set([
  'email',
  'first_name',
  'last_name',
  'created_at',
  'updated_at',
  'id',
  'unsubscribed',
  'audiences',
  'topics',
  '__proto__',
  'constructor',
  'prototype',
]);
export const MAX_PROPERTIES = 50;
/** a string value's longest length, in characters */
export const MAX_STRING = 2000;

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A value as stored, or why it is not one of the type. Dates are kept in a
 * form that sorts as it compares: a calendar date as YYYY-MM-DD, a moment as
 * its UTC ISO 8601 text (segments compare them as text).
 */
export function checkValue(
  type: PropertyType,
  value: unknown,
): { ok: true; value: PropertyValue } | { ok: false; reason: string } {
  switch (type) {
    case 'string':
      if (typeof value !== 'string') return { ok: false, reason: 'must be a string' };
      if (value.length > MAX_STRING) return { ok: false, reason: `must be at most ${MAX_STRING} characters` };
      if (/\0/.test(value)) return { ok: false, reason: 'must not contain NUL' };
      return { ok: true, value };
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
        ? { ok: true, value }
        : { ok: false, reason: 'must be a finite number' };
    case 'boolean':
      return typeof value === 'boolean' ? { ok: true, value } : { ok: false, reason: 'must be true or false' };
    case 'date':
      return dateValue(value);
  }
}

function dateValue(value: unknown): { ok: true; value: string } | { ok: false; reason: string } {
  const bad = { ok: false as const, reason: 'must be a date (YYYY-MM-DD) or a date and time (ISO 8601 with a zone)' };
  if (typeof value !== 'string') return bad;
  // the calendar part must be a real day: Date would roll 2026-02-30 over into March
  const day = value.slice(0, 10);
  const midnight = new Date(`${day}T00:00:00Z`);
  if (!DATE_ONLY.test(day) || Number.isNaN(midnight.getTime()) || !midnight.toISOString().startsWith(day)) return bad;
  if (value.length === 10) return { ok: true, value };
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value)) return bad;
  const t = Date.parse(value);
  return Number.isNaN(t) ? bad : { ok: true, value: new Date(t).toISOString() };
}

/**
 * A contact's properties after `given` is applied to `current`: each key
 * declared, each value of its type; null removes a value. The error names
 * the field (`properties.plan`).
 */
export function applyProperties(
  declared: ReadonlyMap<string, ContactProperty>,
  current: Record<string, PropertyValue>,
  given: Record<string, unknown>,
): { ok: true; properties: Record<string, PropertyValue> } | { ok: false; field: string; reason: string } {
  const out = { ...current };
  for (const [key, value] of Object.entries(given)) {
    const field = `properties.${key}`;
    const p = declared.get(key);
    if (!p)
      return {
        ok: false,
        field,
        reason: 'is not a contact property of this project (POST /v1/contact-properties declares one)',
      };
    if (value === null) {
      delete out[key];
      continue;
    }
    const checked = checkValue(p.type, value);
    if (!checked.ok) return { ok: false, field, reason: checked.reason };
    out[key] = checked.value;
  }
  return { ok: true, properties: out };
}
