import { html, type Html } from './html.js';
import { csrfField } from './layout.js';
import { formMessage, invalid, messageFor, type FormError } from './form-errors.js';
import type { ContactJson, PropertyJson, TopicJson } from './contact-shared.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

// The form of a contact: adding one, and changing one (pure). Each declared property has an input of
// its type; each topic a checkbox (checked: subscribed).

export interface ContactFormValues {
  email: string;
  first_name: string;
  last_name: string;
  /** each property's input as typed */
  properties: Record<string, string>;
  unsubscribed: boolean;
  topics: Record<string, boolean>;
}

/** The form's fields, which the API's error `field` is matched against (`prop-<key>` for a property). */
export const contactFields = (properties: readonly PropertyJson[]) => [
  'email',
  'first_name',
  'last_name',
  'unsubscribed',
  'topics',
  'properties',
  ...properties.map((p) => `prop-${p.key}`),
];

/** A new contact's form: empty, each topic at its default. */
export function newContactValues(topics: readonly TopicJson[]): ContactFormValues {
  const defaults = Object.fromEntries(topics.map((t) => [t.id, t.default_subscription === 'subscribed']));
  return { email: '', first_name: '', last_name: '', properties: {}, unsubscribed: false, topics: defaults };
}

/** A contact's values in the form. */
export function contactValuesOf(c: ContactJson): ContactFormValues {
  return {
    email: c.email,
    first_name: c.first_name ?? '',
    last_name: c.last_name ?? '',
    properties: Object.fromEntries(Object.entries(c.properties).map(([k, v]) => [k, String(v)])),
    unsubscribed: c.unsubscribed,
    topics: { ...c.topics },
  };
}

/** The form's values from a posted form. */
export function postedContact(f: URLSearchParams, properties: readonly PropertyJson[], topics: readonly TopicJson[]) {
  const checked = new Set(f.getAll('topics'));
  return {
    email: f.get('email')?.trim() ?? '',
    first_name: f.get('first_name')?.trim() ?? '',
    last_name: f.get('last_name')?.trim() ?? '',
    properties: Object.fromEntries(properties.map((p) => [p.key, f.get(`prop-${p.key}`)?.trim() ?? ''])),
    unsubscribed: f.get('unsubscribed') === 'true',
    topics: Object.fromEntries(topics.map((t) => [t.id, checked.has(t.id)])),
  } satisfies ContactFormValues;
}

/** A typed value as the API takes it: a number or a boolean when it reads as one (else the API says why not). */
function typed(p: PropertyJson, v: string): string | number | boolean {
  if (p.type === 'number' && v !== '' && Number.isFinite(Number(v))) return Number(v);
  if (p.type === 'boolean' && (v === 'true' || v === 'false')) return v === 'true';
  return v;
}

/**
 * The API's body for the form's values. Adding: blank fields are left out, and only the topics chosen
 * against their default are sent. Changing: a blank name or property removes it (null).
 */
export function contactBody(
  v: ContactFormValues,
  properties: readonly PropertyJson[],
  topics: readonly TopicJson[],
  creating: boolean,
) {
  const props: Record<string, string | number | boolean | null> = {};
  for (const p of properties) {
    const value = v.properties[p.key] ?? '';
    if (value !== '') props[p.key] = typed(p, value);
    else if (!creating) props[p.key] = null;
  }
  const chosen = topics.filter((t) => !creating || v.topics[t.id] !== (t.default_subscription === 'subscribed'));
  const blank = creating ? undefined : null;
  return {
    email: v.email,
    first_name: v.first_name || blank,
    last_name: v.last_name || blank,
    ...(Object.keys(props).length ? { properties: props } : {}),
    unsubscribed: v.unsubscribed,
    ...(chosen.length ? { topics: Object.fromEntries(chosen.map((t) => [t.id, v.topics[t.id] === true])) } : {}),
  };
}

export interface ContactFormOptions {
  action: string;
  submit: string;
  values: ContactFormValues;
  properties: readonly PropertyJson[];
  topics: readonly TopicJson[];
  /** makes the fields' ids unique on the page */
  prefix: string;
  error?: FormError;
}

export function contactForm(session: Session, o: ContactFormOptions): Html {
  const { values: v, error: e, prefix: p } = o;
  return html`<form method="post" action="${o.action}" class="settings">
  ${csrfField(session)}
  ${formMessage(e)}
  <label for="${p}email">Email address</label>
  <input id="${p}email" name="email" type="email" required maxlength="320" autocomplete="off" spellcheck="false" value="${v.email}"${invalid(e, p, 'email')}>
  ${messageFor(e, p, 'email')}
  <label for="${p}first_name">First name <span class="muted">(optional)</span></label>
  <input id="${p}first_name" name="first_name" maxlength="200" autocomplete="off" value="${v.first_name}"${invalid(e, p, 'first_name')}>
  ${messageFor(e, p, 'first_name')}
  <label for="${p}last_name">Last name <span class="muted">(optional)</span></label>
  <input id="${p}last_name" name="last_name" maxlength="200" autocomplete="off" value="${v.last_name}"${invalid(e, p, 'last_name')}>
  ${messageFor(e, p, 'last_name')}
  ${messageFor(e, p, 'properties')}
  ${o.properties.map((prop) => propertyInput(prop, v.properties[prop.key] ?? '', p, e))}
  <label class="check" for="${p}unsubscribed"><input type="checkbox" id="${p}unsubscribed" name="unsubscribed" value="true"${v.unsubscribed ? html` checked` : ''}${invalid(e, p, 'unsubscribed')}> Unsubscribed from all broadcasts</label>
  ${messageFor(e, p, 'unsubscribed')}
  ${o.topics.length ? topicChoices(o.topics, v.topics, p, e) : ''}
  <button type="submit">${o.submit}</button>
</form>`;
}

const INPUT_TYPE: Record<PropertyJson['type'], string> = { string: 'text', number: 'text', date: 'text', boolean: '' };
const HINT: Record<PropertyJson['type'], string> = {
  string: 'text',
  number: 'a number',
  date: 'a date, YYYY-MM-DD',
  boolean: 'yes or no',
};

function propertyInput(prop: PropertyJson, value: string, p: string, e: FormError | undefined): Html {
  const field = `prop-${prop.key}`;
  const id = `${p}${field}`;
  const label = html`<label for="${id}">${prop.key} <span class="muted">(${HINT[prop.type]}, optional)</span></label>`;
  const input =
    prop.type === 'boolean'
      ? html`<select id="${id}" name="${field}"${invalid(e, p, field)}>${['', 'true', 'false'].map((o) => html`<option value="${o}"${o === value ? html` selected` : ''}>${o === '' ? '(none)' : o === 'true' ? 'yes' : 'no'}</option>`)}</select>`
      : html`<input id="${id}" name="${field}" type="${INPUT_TYPE[prop.type]}"${prop.type === 'number' ? html` inputmode="decimal"` : ''} autocomplete="off" value="${value}"${invalid(e, p, field)}>`;
  return html`${label}${input}${messageFor(e, p, field)}`;
}

function topicChoices(topics: readonly TopicJson[], chosen: Record<string, boolean>, p: string, e?: FormError): Html {
  return html`<fieldset${e?.field === 'topics' ? html` aria-describedby="${p}topics-error"` : ''}>
<legend>Topics subscribed to</legend>
${messageFor(e, p, 'topics')}
${topics.map((t) => html`<label class="check" for="${p}topic-${t.id}"><input type="checkbox" id="${p}topic-${t.id}" name="topics" value="${t.id}"${chosen[t.id] ? html` checked` : ''}> ${t.name}</label>`)}
</fieldset>`;
}
