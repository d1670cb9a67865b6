import { parseAddress } from '../../../lib/address.js';
import { checkValue, type ContactProperty, type PropertyValue } from '../contacts/contact-properties.js';
import { cellValue } from '../contacts/contact-import.js';
import type { Contact } from '../contacts/contacts.repo.js';
import type { Submitted } from './forms.repo.js';

// What a signup form may ask for, and what a submission of it means (docs/forms.md). Pure.

export const CONTACT_FIELDS = ['email', 'first_name', 'last_name'] as const;

/**
 * The honeypot: a field people never see and bots fill. A property key cannot
 * hold a hyphen, so it never shadows a field of the form.
 */
export const HONEYPOT = 'your-website';

type Checked<T> = { ok: true; value: T } | { ok: false; field: string; reason: string };

/** A form's fields: email always (first, when not given), each field once, properties declared in the project. */
export function checkFields(
  given: readonly string[] | undefined,
  declared: ReadonlyMap<string, ContactProperty>,
): Checked<string[]> {
  const list = given ?? [];
  for (const [i, f] of list.entries()) {
    if (list.indexOf(f) !== i) return { ok: false, field: `fields[${i}]`, reason: `${f} is given twice` };
    if (!(CONTACT_FIELDS as readonly string[]).includes(f) && !declared.has(f)) {
      return {
        ok: false,
        field: `fields[${i}]`,
        reason: `${f} is neither email, first_name, last_name nor a declared contact property (POST /v1/contact-properties declares one)`,
      };
    }
  }
  return { ok: true, value: list.includes('email') ? [...list] : ['email', ...list] };
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/**
 * A URL a browser is sent to or comes from: https, or plain http to a
 * loopback host where network.allow_private allows it (tests), like a webhook's
 * URL. Never fetched by the appliance.
 */
function webUrl(raw: string, allowPrivate: boolean): { ok: true; url: URL } | { ok: false; reason: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'is not a valid URL' };
  }
  if (url.username || url.password) return { ok: false, reason: 'must not carry a user name or password' };
  if (url.protocol === 'https:') return { ok: true, url };
  if (url.protocol === 'http:' && allowPrivate && LOOPBACK.test(url.host.replace(/:\d+$/, '')))
    return { ok: true, url };
  return { ok: false, reason: 'must be an https URL' };
}

export function checkRedirectUrl(raw: string, allowPrivate: boolean): Checked<string> {
  const u = webUrl(raw, allowPrivate);
  return u.ok ? { ok: true, value: u.url.href } : { ok: false, field: 'redirect_url', reason: u.reason };
}

/** Origins as browsers send them in `Origin`: scheme://host[:port], nothing after. */
export function checkOrigins(list: readonly string[], allowPrivate: boolean): Checked<string[]> {
  const out: string[] = [];
  for (const [i, raw] of list.entries()) {
    const u = webUrl(raw, allowPrivate);
    if (!u.ok) return { ok: false, field: `allowed_origins[${i}]`, reason: u.reason };
    if (raw.replace(/\/$/, '').toLowerCase() !== u.url.origin.toLowerCase())
      return {
        ok: false,
        field: `allowed_origins[${i}]`,
        reason: `must be an origin (${u.url.origin}), without a path, query or fragment`,
      };
    if (!out.includes(u.url.origin)) out.push(u.url.origin);
  }
  return { ok: true, value: out };
}

/** A submission read: the address and the values it asks for, or that the honeypot was filled. */
export type ReadSubmission =
  | { ok: true; honeypot: true }
  | { ok: true; honeypot: false; email: string; submitted: Submitted }
  | { ok: false; field: string; reason: string };

const blank = (v: unknown) => v === undefined || v === null || (typeof v === 'string' && v.trim() === '');

function nameValue(field: string, v: unknown): Checked<string> {
  if (typeof v !== 'string') return { ok: false, field, reason: 'must be a string' };
  if (v.length > 200 || v.includes('\0'))
    return { ok: false, field, reason: 'must be at most 200 characters, without NUL' };
  return { ok: true, value: v.trim() };
}

/**
 * A submission of the form's fields: the page's (text) or JSON (typed values,
 * or text read as the page's). An empty field sets nothing; a field the form
 * does not have is refused, naming it.
 */
export function readSubmission(
  input: Record<string, unknown>,
  fields: readonly string[],
  declared: ReadonlyMap<string, ContactProperty>,
): ReadSubmission {
  if (!blank(input[HONEYPOT])) return { ok: true, honeypot: true };
  const unknown = Object.keys(input).find((k) => k !== HONEYPOT && !fields.includes(k));
  if (unknown !== undefined) return { ok: false, field: unknown, reason: 'is not a field of this form' };
  if (typeof input.email !== 'string' || blank(input.email))
    return { ok: false, field: 'email', reason: 'is required' };
  const address = parseAddress(input.email);
  if (!address.ok) return { ok: false, field: 'email', reason: address.reason };
  const submitted: Submitted = { properties: {} };
  for (const f of fields) {
    const v = input[f];
    if (f === 'email' || blank(v)) continue;
    if (f === 'first_name' || f === 'last_name') {
      const name = nameValue(f, v);
      if (!name.ok) return name;
      submitted[f] = name.value;
      continue;
    }
    const p = declared.get(f);
    // a property no longer declared is left out: the form still works for the rest
    if (!p) continue;
    const checked = typeof v === 'string' ? cellValue(p.type, v) : checkValue(p.type, v);
    if (!checked.ok) return { ok: false, field: f, reason: checked.reason };
    submitted.properties[f] = checked.value;
  }
  return { ok: true, honeypot: false, email: address.value.address.toLowerCase(), submitted };
}

/** A property's label on the page: `signup_date` → "Signup date". */
export const fieldLabel = (key: string) =>
  ({ email: 'Email address', first_name: 'First name', last_name: 'Last name' })[key] ??
  (key.charAt(0).toUpperCase() + key.slice(1)).replace(/_/g, ' ');

type ContactValues = Pick<Contact, 'firstName' | 'lastName' | 'properties'>;

/**
 * A contact's values with a submission applied. `overwrite` (its owner
 * confirmed by the link): every submitted value is set. Otherwise (no double
 * opt-in, anyone may have typed the address) only what the contact has no
 * value for is filled, and an unticked box (false, also the page's hidden
 * input) fills nothing. A property deleted or retyped since is left as it is.
 */
export function submittedValues(
  c: ContactValues,
  s: Submitted,
  declared: ReadonlyMap<string, ContactProperty>,
  overwrite: boolean,
): ContactValues {
  const sets = (current: unknown, v: PropertyValue) =>
    overwrite || ((current === undefined || current === null || current === '') && v !== false);
  const properties = { ...c.properties };
  for (const [k, v] of Object.entries(s.properties)) {
    const p = declared.get(k);
    if (p && checkValue(p.type, v).ok && sets(Object.hasOwn(c.properties, k) ? c.properties[k] : undefined, v))
      properties[k] = v;
  }
  return {
    firstName: s.first_name !== undefined && sets(c.firstName, s.first_name) ? s.first_name : c.firstName,
    lastName: s.last_name !== undefined && sets(c.lastName, s.last_name) ? s.last_name : c.lastName,
    properties,
  };
}

/** What a submission asks to set, labelled as its form's page labels the fields: the confirmation page shows it. */
export function submittedList(s: Submitted): Array<{ label: string; value: string }> {
  const names = (['first_name', 'last_name'] as const).flatMap((k) =>
    s[k] !== undefined ? [{ label: fieldLabel(k), value: s[k] }] : [],
  );
  return [
    ...names,
    ...Object.entries(s.properties).map(([k, v]) => ({
      label: fieldLabel(k),
      value: typeof v === 'boolean' ? (v ? 'Yes' : 'No') : String(v),
    })),
  ];
}
