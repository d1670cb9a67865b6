import { html, type Html } from './html.js';
import { csrfField } from './layout.js';
import { formMessage, invalid, messageFor, type FormError } from './form-errors.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

// The form of a webhook endpoint: adding one, and changing its settings (pure).

/** What the form holds: an endpoint's settings, or what was sent when the API refused them. */
export interface EndpointFormValues {
  url: string;
  description: string;
  events: string[];
  signature: string;
  payload: string;
}

/** The choices the API offers, in its order. */
export interface EndpointChoices {
  eventTypes: readonly string[];
  signatures: readonly string[];
  payloads: readonly string[];
}

/** The form fields, which the API's error `field` is matched against. */
export const ENDPOINT_FIELDS = ['url', 'description', 'events', 'signature', 'payload'] as const;

const SIGNATURE_LABELS: Record<string, string> = {
  service: 'Service-Signature: t= and v1=, HMAC-SHA256 of "t.body"',
  standard: 'Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature',
};
const PAYLOAD_LABELS: Record<string, string> = {
  service: 'Posthorn events',
  resend: 'Resend’s event shape (for code written against Resend)',
};

/** The group a type is shown in: what happened to an email, what its reader did, and the rest by kind. */
function groupOf(type: string): string {
  if (type === 'email.received') return 'Received mail';
  if (['email.opened', 'email.clicked', 'email.unsubscribed'].includes(type)) return 'Engagement';
  if (['email.scheduled', 'email.cancelled'].includes(type)) return 'Scheduling';
  if (type.startsWith('email.')) return 'Delivery';
  if (type.startsWith('contact.')) return 'Contacts';
  if (type.startsWith('domain.')) return 'Domains';
  if (type.startsWith('broadcast.')) return 'Broadcasts';
  return 'Other';
}

export interface EndpointFormOptions {
  action: string;
  submit: string;
  values: EndpointFormValues;
  choices: EndpointChoices;
  /** makes the fields' ids unique on the page */
  prefix: string;
  error?: FormError;
}

export function endpointForm(session: Session, o: EndpointFormOptions): Html {
  const { values: v, error: e, prefix: p } = o;
  const groups = new Map<string, string[]>();
  for (const t of o.choices.eventTypes) groups.set(groupOf(t), [...(groups.get(groupOf(t)) ?? []), t]);
  const checked = new Set(v.events);
  return html`<form method="post" action="${o.action}" class="settings">
  ${csrfField(session)}
  ${formMessage(e)}
  <label for="${p}url">Endpoint URL</label>
  <input id="${p}url" name="url" type="url" required maxlength="2000" inputmode="url" autocomplete="off" spellcheck="false" placeholder="https://example.com/webhooks/posthorn" value="${v.url}"${invalid(e, p, 'url')}>
  ${messageFor(e, p, 'url')}
  <p class="muted">HTTPS, on a public address: the appliance refuses private and loopback addresses.</p>
  <label for="${p}description">Description <span class="muted">(optional)</span></label>
  <input id="${p}description" name="description" type="text" maxlength="500" autocomplete="off" value="${v.description}"${invalid(e, p, 'description')}>
  ${messageFor(e, p, 'description')}
  <fieldset${e?.field === 'events' ? html` aria-describedby="${p}events-error"` : ''}>
    <legend>Events</legend>
    ${messageFor(e, p, 'events')}
    ${[...groups].map(
      ([group, types]) =>
        html`<fieldset class="group"><legend>${group}</legend>${types.map((t) => {
          const id = `${p}ev-${t.replace(/[^a-z]/g, '-')}`;
          return html`<label class="check" for="${id}"><input type="checkbox" id="${id}" name="events" value="${t}"${checked.has(t) ? html` checked` : ''}> ${t}</label>`;
        })}</fieldset>`,
    )}
  </fieldset>
  <label for="${p}signature">Signature</label>
  <select id="${p}signature" name="signature"${invalid(e, p, 'signature')}>${o.choices.signatures.map((s) => html`<option value="${s}"${s === v.signature ? html` selected` : ''}>${SIGNATURE_LABELS[s] ?? s}</option>`)}</select>
  ${messageFor(e, p, 'signature')}
  <label for="${p}payload">Payload</label>
  <select id="${p}payload" name="payload"${invalid(e, p, 'payload')}>${o.choices.payloads.map((s) => html`<option value="${s}"${s === v.payload ? html` selected` : ''}>${PAYLOAD_LABELS[s] ?? s}</option>`)}</select>
  ${messageFor(e, p, 'payload')}
  <button type="submit">${o.submit}</button>
</form>`;
}

/** The form's values from a posted form. */
export function endpointValues(f: URLSearchParams): EndpointFormValues {
  return {
    url: f.get('url')?.trim() ?? '',
    description: f.get('description')?.trim() ?? '',
    events: f.getAll('events'),
    signature: f.get('signature') ?? 'service',
    payload: f.get('payload') ?? 'service',
  };
}
