import { html, type Html } from './html.js';
import { BASE, csrfField, time } from './layout.js';
import { formMessage, invalid, messageFor, type FormError } from './form-errors.js';
import { contactsLayout, doneNote, type PropertyJson } from './contact-shared.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

// Contact properties: the declared ones with a delete button each, and the form that declares one (pure).

export interface PropertyFormValues {
  key: string;
  type: string;
  fallback: string;
}

export const PROPERTY_FIELDS = ['key', 'type', 'fallback'] as const;
const TYPES = ['string', 'number', 'boolean', 'date'] as const;

export interface PropertyListView {
  properties: PropertyJson[];
  form: PropertyFormValues;
  error?: FormError;
  done?: string;
}

export function propertyListPage(session: Session, v: PropertyListView): Html {
  return contactsLayout(
    session,
    'Contact properties',
    '/contact-properties',
    html`<h1>Contact properties</h1>
${doneNote(v.done)}
<p>The values a contact may hold besides its address and names, each of a type; templates read them, and segments filter on them.</p>
${
  v.properties.length
    ? html`<div class="scroll"><table>
<caption class="visually-hidden">Contact properties of the project</caption>
<thead><tr><th scope="col">Key</th><th scope="col">Type</th><th scope="col">Fallback</th><th scope="col">Declared</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${v.properties.map((p) => html`<tr><td><code>${p.key}</code></td><td>${p.type}</td><td>${p.fallback === null ? html`<span class="muted">none</span>` : String(p.fallback)}</td><td>${time(p.created_at)}</td><td><form method="post" action="${BASE}/contact-properties/${p.key}/delete">${csrfField(session)}<button type="submit" class="secondary" aria-label="Delete property ${p.key}">Delete</button></form></td></tr>`)}</tbody>
</table></div>
<p class="muted">Deleting a property keeps the values contacts hold until they change; a property a segment reads cannot be deleted.</p>`
    : html`<p class="empty">No contact properties yet.</p>`
}
<section class="card" aria-labelledby="h-add">
<h2 id="h-add">Declare a property</h2>
${propertyForm(session, v.form, v.error)}
</section>`,
  );
}

function propertyForm(session: Session, v: PropertyFormValues, e?: FormError): Html {
  const p = 'prop-';
  return html`<form method="post" action="${BASE}/contact-properties" class="settings">
${csrfField(session)}
${formMessage(e)}
<label for="${p}key">Property key</label>
<input id="${p}key" name="key" required maxlength="50" pattern="[a-z_][a-z0-9_]*" autocomplete="off" spellcheck="false" aria-describedby="${p}key-hint" value="${v.key}"${invalid(e, p, 'key')}>
<p class="muted" id="${p}key-hint">Lower-case letters, digits and _, not starting with a digit: plan, signup_date.</p>
${messageFor(e, p, 'key')}
<label for="${p}type">Type</label>
<select id="${p}type" name="type"${invalid(e, p, 'type')}>${TYPES.map((t) => html`<option value="${t}"${t === v.type ? html` selected` : ''}>${t}</option>`)}</select>
${messageFor(e, p, 'type')}
<label for="${p}fallback">Fallback <span class="muted">(optional: what a template shows for a contact without a value)</span></label>
<input id="${p}fallback" name="fallback" autocomplete="off" value="${v.fallback}"${invalid(e, p, 'fallback')}>
${messageFor(e, p, 'fallback')}
<button type="submit">Declare property</button>
</form>`;
}
