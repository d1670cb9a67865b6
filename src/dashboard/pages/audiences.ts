import { html, type Html } from './html.js';
import { BASE, csrfField, time } from './layout.js';
import { formMessage, invalid, messageFor, type FormError } from './form-errors.js';
import {
  contactsLayout,
  contactTable,
  doneNote,
  pager,
  type AudienceJson,
  type ContactJson,
  type ListJson,
} from './contact-shared.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

// Audiences: the list and its create form, an audience's page with its contacts, and its delete (pure).

export interface AudienceListView {
  audiences: ListJson<AudienceJson>;
  name: string;
  error?: FormError;
  done?: string;
}

export function audienceListPage(session: Session, v: AudienceListView): Html {
  const e = v.error;
  return contactsLayout(
    session,
    'Audiences',
    '/audiences',
    html`<h1>Audiences</h1>
${doneNote(v.done)}
${
  v.audiences.data.length
    ? html`<div class="scroll"><table>
<caption class="visually-hidden">Audiences of the project, newest first</caption>
<thead><tr><th scope="col">Audience</th><th scope="col">Contacts</th><th scope="col">Created</th></tr></thead>
<tbody>${v.audiences.data.map((a) => html`<tr><td><a href="${BASE}/audiences/${a.id}">${a.name}</a></td><td>${a.contact_count}</td><td>${time(a.created_at)}</td></tr>`)}</tbody>
</table></div>`
    : html`<p class="empty">No audiences yet: an audience is a named list of contacts that broadcasts go to.</p>`
}
${pager('/audiences', v.audiences.next_cursor, {}, 'audiences')}
<section class="card" aria-labelledby="h-add">
<h2 id="h-add">Make an audience</h2>
<form method="post" action="${BASE}/audiences" class="settings">
${csrfField(session)}
${formMessage(e)}
<label for="aud-name">Audience name</label>
<input id="aud-name" name="name" required maxlength="200" autocomplete="off" value="${v.name}"${invalid(e, 'aud-', 'name')}>
${messageFor(e, 'aud-', 'name')}
<button type="submit">Make audience</button>
</form>
</section>`,
  );
}

export interface AudienceView {
  audience: AudienceJson;
  contacts: ListJson<ContactJson>;
  /** the add form, refused: the address it was sent with */
  add?: { email: string; error: FormError };
  done?: string;
}

export function audiencePage(session: Session, v: AudienceView): Html {
  const a = v.audience;
  const e = v.add?.error;
  const remove = (c: ContactJson) =>
    html`<form method="post" action="${BASE}/audiences/${a.id}/remove">${csrfField(session)}<input type="hidden" name="contact_id" value="${c.id}"><button type="submit" class="secondary" aria-label="Remove ${c.email} from the audience">Remove</button></form>`;
  return contactsLayout(
    session,
    a.name,
    '/audiences',
    html`<p class="crumbs"><a href="${BASE}/audiences">Audiences</a></p>
<h1>${a.name}</h1>
${doneNote(v.done)}
<dl class="facts">
  <div><dt>Id</dt><dd><code>${a.id}</code></dd></div>
  <div><dt>Contacts</dt><dd>${a.contact_count}</dd></div>
  <div><dt>Created</dt><dd>${time(a.created_at)}</dd></div>
</dl>
<div class="actions">
<a href="${BASE}/contacts/export.csv?audience_id=${a.id}" download>Export its contacts as CSV</a>
<a href="${BASE}/contacts/import?audience_id=${a.id}">Import contacts into it</a>
<a class="button-link danger" href="${BASE}/audiences/${a.id}/delete">Delete audience…</a>
</div>
<form method="post" action="${BASE}/audiences/${a.id}/add" class="filters">
${csrfField(session)}
${formMessage(e)}
<div><label for="member-email">Address to add</label>
<input id="member-email" name="emails" type="email" required maxlength="320" autocomplete="off" value="${v.add?.email ?? ''}"${invalid(e, 'member-', 'emails')}>
${messageFor(e, 'member-', 'emails')}</div>
<button type="submit">Add to audience</button>
</form>
<p class="muted">An address the project has no contact for becomes a new contact.</p>
<h2>Its contacts</h2>
${v.contacts.data.length ? contactTable(`Contacts of ${a.name}`, v.contacts.data, remove) : html`<p class="empty">No contacts in this audience yet.</p>`}
${pager(`/audiences/${a.id}`, v.contacts.next_cursor, {}, 'contacts')}`,
  );
}

export function deleteAudiencePage(session: Session, a: AudienceJson): Html {
  return contactsLayout(
    session,
    `Delete ${a.name}`,
    '/audiences',
    html`<p class="crumbs"><a href="${BASE}/audiences">Audiences</a> › <a href="${BASE}/audiences/${a.id}">${a.name}</a></p>
<h1>Delete this audience?</h1>
<p><strong>${a.name}</strong>, ${a.contact_count} contacts</p>
<p>The list goes; its contacts stay in the project. An audience a segment, a signup form or a broadcast uses cannot be deleted until that is changed.</p>
<form method="post" action="${BASE}/audiences/${a.id}/delete">${csrfField(session)}<button type="submit" class="danger">Delete audience</button> <a href="${BASE}/audiences/${a.id}">Keep it</a></form>`,
  );
}
