import { html, queryString, type Html } from './html.js';
import { BASE, layout } from './layout.js';
import { emailTable, type EmailJson } from './emails.js';
import type { DomainJson } from './domains.js';
import { templateUrl, type TemplateSummaryJson } from './templates.js';
import type { ContactJson } from './contact-shared.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';
import type { SearchTerms } from './search-terms.js';

/** What a search found, by kind; null where the key may not read that kind (its section is left out). */
export interface SearchFound {
  /** an email id or Message-ID that names no email of this project */
  missingEmail: string | null;
  emails: { data: EmailJson[]; more: boolean } | null;
  domains: DomainJson[] | null;
  templates: TemplateSummaryJson[] | null;
  contacts: { data: ContactJson[]; more: boolean } | null;
}

export function searchPage(session: Session, t: SearchTerms, found: SearchFound | null): Html {
  return layout(
    { title: t.q ? `Search: ${t.q}` : 'Search', session, q: t.q },
    html`<h1>Search</h1>
<p class="muted">One box finds an email by its id, its recipient's address, its Message-ID or a tag (<code>name:value</code>); a domain by its name; a template by its id or name; a contact by its address.</p>
${found ? results(t, found) : ''}`,
  );
}

function results(t: SearchTerms, f: SearchFound): Html {
  const sections = [
    f.missingEmail ? html`<p class="empty">No email <code>${f.missingEmail}</code> in this project.</p>` : '',
    f.emails?.data.length ? emailsFound(t, f.emails) : '',
    f.domains?.length ? domainsFound(f.domains) : '',
    f.templates?.length ? templatesFound(f.templates) : '',
    f.contacts?.data.length ? contactsFound(t, f.contacts) : '',
  ].filter(Boolean);
  const any = f.emails?.data.length || f.domains?.length || f.templates?.length || f.contacts?.data.length;
  return html`${sections}${any || f.missingEmail ? '' : html`<p class="empty">Nothing matches “${t.q}”.</p>`}`;
}

function emailsFound(t: SearchTerms, emails: NonNullable<SearchFound['emails']>): Html {
  const filter = t.recipient ? { to: t.recipient } : { tag: t.tag };
  const what = t.recipient ? html`to ${t.recipient}` : html`tagged ${t.tag}`;
  return html`<section aria-labelledby="h-emails"><h2 id="h-emails">Emails ${what}</h2>
${emailTable(emails.data, 'Emails found, newest first')}
${emails.more ? html`<p class="pager"><a href="${BASE}/emails${queryString(filter)}">All emails ${what} →</a></p>` : ''}
</section>`;
}

function domainsFound(domains: DomainJson[]): Html {
  return html`<section aria-labelledby="h-domains"><h2 id="h-domains">Domains</h2>
<ul class="found">${domains.map((d) => html`<li><a href="${BASE}/domains/${d.id}">${d.domain}</a> <span class="badge s-${d.status}">${d.status}</span></li>`)}</ul>
</section>`;
}

function templatesFound(templates: TemplateSummaryJson[]): Html {
  return html`<section aria-labelledby="h-templates"><h2 id="h-templates">Templates</h2>
<ul class="found">${templates.map((tp) => html`<li><a href="${templateUrl(tp.id)}">${tp.name}</a> <code>${tp.id}</code></li>`)}</ul>
</section>`;
}

function contactsFound(t: SearchTerms, contacts: NonNullable<SearchFound['contacts']>): Html {
  return html`<section aria-labelledby="h-contacts"><h2 id="h-contacts">Contacts</h2>
<ul class="found">${contacts.data.map((c) => html`<li><a href="${BASE}/contacts/${c.id}">${c.email}</a>${c.first_name || c.last_name ? html` <span class="muted">${[c.first_name, c.last_name].filter(Boolean).join(' ')}</span>` : ''}</li>`)}</ul>
${contacts.more ? html`<p class="pager"><a href="${BASE}/contacts${queryString({ email: t.q })}">All contacts matching “${t.q}” →</a></p>` : ''}
</section>`;
}
