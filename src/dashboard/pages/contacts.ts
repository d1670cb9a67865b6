import { html, queryString, type Html } from './html.js';
import { BASE, csrfField, time } from './layout.js';
import type { FormError } from './form-errors.js';
import { contactForm, type ContactFormValues } from './contact-form.js';
import {
  contactsLayout,
  contactTable,
  doneNote,
  nameOf,
  pager,
  standing,
  type AudienceJson,
  type ContactJson,
  type ListJson,
  type PropertyJson,
  type TopicJson,
} from './contact-shared.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

// The contacts of a project: the list with its search, adding one, a contact's page and its delete (pure).

export interface ContactListView {
  contacts: ListJson<ContactJson>;
  /** the search: a part of the address, an audience */
  search: { email?: string; audience_id?: string };
  audiences: AudienceJson[];
  properties: PropertyJson[];
  topics: TopicJson[];
  form: ContactFormValues;
  error?: FormError;
  done?: string;
}

export function contactListPage(session: Session, v: ContactListView): Html {
  const searching = Boolean(v.search.email || v.search.audience_id);
  return contactsLayout(
    session,
    'Contacts',
    '/contacts',
    html`<h1>Contacts</h1>
${doneNote(v.done)}
${searchForm(v)}
<p class="actions"><a href="${BASE}/contacts/import">Import contacts from CSV</a> <a href="${BASE}/contacts/export.csv${queryString({ audience_id: v.search.audience_id })}" download>Export ${v.search.audience_id ? "this audience's" : 'all'} contacts as CSV</a></p>
${
  v.contacts.data.length
    ? contactTable('Contacts of the project, newest first', v.contacts.data)
    : html`<p class="empty">${searching ? 'No contact matches this search.' : 'No contacts yet: add one below, or import a CSV file.'}</p>`
}
${pager('/contacts', v.contacts.next_cursor, v.search, 'contacts')}
<section class="card" aria-labelledby="h-add">
<h2 id="h-add">Add a contact</h2>
${contactForm(session, { action: `${BASE}/contacts`, submit: 'Add contact', values: v.form, properties: v.properties, topics: v.topics, prefix: 'add-', error: v.error })}
</section>`,
  );
}

function searchForm(v: ContactListView): Html {
  return html`<form method="get" action="${BASE}/contacts" class="filters" role="search">
<div><label for="find-email">Find by address</label><input id="find-email" name="email" type="search" maxlength="320" autocomplete="off" value="${v.search.email ?? ''}"></div>
<div><label for="find-audience">In audience</label><select id="find-audience" name="audience_id"><option value="">(any)</option>${v.audiences.map((a) => html`<option value="${a.id}"${a.id === v.search.audience_id ? html` selected` : ''}>${a.name}</option>`)}</select></div>
<button type="submit" class="secondary">Search</button>
</form>`;
}

export interface ContactView {
  contact: ContactJson;
  /** the audiences it is in, by id */
  audiences: AudienceJson[];
  properties: PropertyJson[];
  topics: TopicJson[];
  /** the settings form, refused: what it was sent with */
  edit?: { values: ContactFormValues; error: FormError };
  done?: string;
}

export function contactPage(session: Session, v: ContactView, values: ContactFormValues): Html {
  const c = v.contact;
  return contactsLayout(
    session,
    c.email,
    '/contacts',
    html`<p class="crumbs"><a href="${BASE}/contacts">Contacts</a></p>
<h1 class="addr">${c.email}</h1>
${doneNote(v.done)}
<dl class="facts">
  <div><dt>Id</dt><dd><code>${c.id}</code></dd></div>
  ${nameOf(c) ? html`<div><dt>Name</dt><dd>${nameOf(c)}</dd></div>` : ''}
  <div><dt>Broadcasts</dt><dd>${standing(c)}</dd></div>
  <div><dt>Added, changed</dt><dd>${time(c.created_at)}, ${time(c.updated_at)}</dd></div>
  <div><dt>Audiences</dt><dd>${v.audiences.length ? v.audiences.map((a) => html`<a class="tag" href="${BASE}/audiences/${a.id}">${a.name}</a> `) : html`<span class="muted">none</span>`}</dd></div>
</dl>
<div class="actions"><a class="button-link danger" href="${BASE}/contacts/${c.id}/delete">Delete contact…</a></div>
<section class="card" aria-labelledby="h-edit">
<h2 id="h-edit">Properties and topics</h2>
${contactForm(session, { action: `${BASE}/contacts/${c.id}`, submit: 'Save contact', values, properties: v.properties, topics: v.topics, prefix: 'set-', error: v.edit?.error })}
</section>`,
  );
}

export function deleteContactPage(session: Session, c: ContactJson): Html {
  return contactsLayout(
    session,
    `Delete ${c.email}`,
    '/contacts',
    html`<p class="crumbs"><a href="${BASE}/contacts">Contacts</a> › <a href="${BASE}/contacts/${c.id}">${c.email}</a></p>
<h1>Delete this contact?</h1>
<p class="addr"><strong>${c.email}</strong></p>
<p>It leaves every audience, with its properties and topic choices, and no broadcast goes to it any more. Emails already sent to it stay in the log. To stop broadcasts and keep the contact, mark it unsubscribed instead.</p>
<form method="post" action="${BASE}/contacts/${c.id}/delete">${csrfField(session)}<button type="submit" class="danger">Delete contact</button> <a href="${BASE}/contacts/${c.id}">Keep it</a></form>`,
  );
}
