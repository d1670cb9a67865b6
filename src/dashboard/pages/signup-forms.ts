import { html, type Html } from './html.js';
import { BASE, csrfField, time } from './layout.js';
import type { FormError } from './form-errors.js';
import {
  contactsLayout,
  doneNote,
  pager,
  type AudienceJson,
  type ListJson,
  type PropertyJson,
} from './contact-shared.js';
import { embedSnippet, signupFormFields, type SignupFormJson, type SignupFormValues } from './signup-form-fields.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

// Signup forms: the list and its create form, a form's page with its embed snippet and settings, and
// its delete (pure).

export interface SignupFormListView {
  forms: ListJson<SignupFormJson>;
  audiences: AudienceJson[];
  properties: PropertyJson[];
  form: SignupFormValues;
  error?: FormError;
  done?: string;
}

export function signupFormListPage(session: Session, v: SignupFormListView): Html {
  const names = new Map(v.audiences.map((a) => [a.id, a.name]));
  return contactsLayout(
    session,
    'Signup forms',
    '/forms',
    html`<h1>Signup forms</h1>
${doneNote(v.done)}
${
  v.forms.data.length
    ? html`<div class="scroll"><table>
<caption class="visually-hidden">Signup forms of the project, newest first</caption>
<thead><tr><th scope="col">Form</th><th scope="col">Adds to</th><th scope="col">Double opt-in</th><th scope="col">Mail</th><th scope="col">Created</th></tr></thead>
<tbody>${v.forms.data.map((f) => html`<tr><td><a href="${BASE}/forms/${f.id}">${f.name}</a></td><td>${names.get(f.audience_id) ?? f.audience_id}</td><td>${f.double_opt_in ? 'yes' : 'no'}</td><td>${f.environment}</td><td>${time(f.created_at)}</td></tr>`)}</tbody>
</table></div>`
    : html`<p class="empty">No signup forms yet: a form is a page (and an address other sites post to) where people add themselves to an audience.</p>`
}
${pager('/forms', v.forms.next_cursor, {}, 'forms')}
<section class="card" aria-labelledby="h-add">
<h2 id="h-add">Make a signup form</h2>
${signupFormFields(session, { action: `${BASE}/forms`, submit: 'Make form', values: v.form, audiences: v.audiences, properties: v.properties, prefix: 'add-', error: v.error })}
</section>`,
  );
}

export interface SignupFormView {
  form: SignupFormJson;
  /** where the form's page is: its url, or (without http.public_url) this dashboard's origin */
  url: string;
  audiences: AudienceJson[];
  properties: PropertyJson[];
  values: SignupFormValues;
  error?: FormError;
  done?: string;
}

export function signupFormPage(session: Session, v: SignupFormView): Html {
  const f = v.form;
  const audience = v.audiences.find((a) => a.id === f.audience_id);
  const snippet = embedSnippet(v.url, f.fields, v.properties);
  return contactsLayout(
    session,
    f.name,
    '/forms',
    html`<p class="crumbs"><a href="${BASE}/forms">Signup forms</a></p>
<h1>${f.name}</h1>
${doneNote(v.done)}
<dl class="facts">
  <div><dt>Id</dt><dd><code>${f.id}</code></dd></div>
  <div><dt>Public page</dt><dd class="addr"><a href="${v.url}">${v.url}</a></dd></div>
  <div><dt>Adds to</dt><dd>${audience ? html`<a href="${BASE}/audiences/${audience.id}">${audience.name}</a>` : f.audience_id}</dd></div>
  <div><dt>Confirmation</dt><dd>${f.double_opt_in ? html`double opt-in, mailed from ${f.from ?? ''}` : 'none: signups join at once'}</dd></div>
  <div><dt>Mail</dt><dd>${f.environment === 'test' ? 'test: confirmation mail is simulated' : 'live'}</dd></div>
  <div><dt>Created</dt><dd>${time(f.created_at)}</dd></div>
</dl>
${f.url ? '' : html`<p class="note">http.public_url is not set: the address below is the one this page was loaded from, and double opt-in needs public_url for its links.</p>`}
<section aria-labelledby="h-embed">
<h2 id="h-embed">Embed it in your site</h2>
<p>Paste this HTML where the form should be: it posts to the form's page, which answers (or sends to the address you set) after a signup. The hidden <code>your-website</code> field turns bots away.</p>
<label for="embed-snippet">Embed snippet</label>
<textarea id="embed-snippet" class="snippet" readonly rows="${snippet.split('\n').length}" spellcheck="false">${snippet}</textarea>
<button type="button" class="secondary" data-copy="${snippet}">Copy snippet</button>
</section>
<div class="actions"><a class="button-link danger" href="${BASE}/forms/${f.id}/delete">Delete form…</a></div>
<details${v.error ? html` open` : ''}><summary>Change settings</summary>
${signupFormFields(session, { action: `${BASE}/forms/${f.id}`, submit: 'Save form', values: v.values, audiences: v.audiences, properties: v.properties, prefix: 'set-', error: v.error })}
</details>`,
  );
}

export function deleteSignupFormPage(session: Session, f: SignupFormJson): Html {
  return contactsLayout(
    session,
    `Delete ${f.name}`,
    '/forms',
    html`<p class="crumbs"><a href="${BASE}/forms">Signup forms</a> › <a href="${BASE}/forms/${f.id}">${f.name}</a></p>
<h1>Delete this signup form?</h1>
<p><strong>${f.name}</strong></p>
<p>Its page stops answering, and so do the confirmation links already mailed; the contacts it added stay. Sites that embed it get an error from then on.</p>
<form method="post" action="${BASE}/forms/${f.id}/delete">${csrfField(session)}<button type="submit" class="danger">Delete form</button> <a href="${BASE}/forms/${f.id}">Keep it</a></form>`,
  );
}
