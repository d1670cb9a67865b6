import { html, type Html } from './html.js';
import { BASE, badge, csrfField, layout, time } from './layout.js';
import { insightsSection, type InsightsJson } from './domain-insights.js';
import { formMessage, invalid, messageFor, type FormError } from './form-errors.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

// interface §2.2, as the pages read it.
export interface DomainJson {
  id: string;
  domain: string;
  status: string;
  failure_reason: string | null;
  verified_at: string | null;
  last_checked_at: string | null;
  created_at: string;
  records: Array<{
    purpose: string;
    required: boolean;
    type: string;
    name: string;
    value: string;
    priority?: number;
    dns: string;
  }>;
  dns_summary: { required_total: number; required_found: number; checked: boolean };
  open_tracking: boolean;
  click_tracking: boolean;
  tracking: { available: boolean };
  tls: string;
  custom_return_path: string;
}

/** What the add form holds: the defaults, or what was sent when the API refused it. */
export interface NewDomainForm {
  domain: string;
  custom_return_path: string;
  open_tracking: boolean;
  click_tracking: boolean;
  tls: string;
}

/** The form fields, which the API's error `field` is matched against. */
export const DOMAIN_FIELDS = ['domain', 'custom_return_path', 'open_tracking', 'click_tracking', 'tls'] as const;
const TLS_MODES = ['opportunistic', 'enforced'];

export interface DomainListView {
  domains: DomainJson[];
  form: NewDomainForm;
  error?: FormError;
  /** a domain just deleted */
  deleted?: string;
}

export function domainListPage(session: Session, v: DomainListView): Html {
  const { domains } = v;
  return layout(
    { title: 'Domains', section: '/domains', session },
    html`<h1>Domains</h1>
${v.deleted ? html`<p class="note" role="status">Domain ${v.deleted} is deleted: mail from it is no longer sent.</p>` : ''}
${
  domains.length
    ? html`<div class="scroll"><table>
<thead><tr><th scope="col">Domain</th><th scope="col">Status</th><th scope="col">Required records found</th><th scope="col">Last checked</th></tr></thead>
<tbody>${domains.map((d) => html`<tr><td><a href="${BASE}/domains/${d.id}">${d.domain}</a></td><td>${badge(d.status)}</td><td>${d.dns_summary.required_found} of ${d.dns_summary.required_total}</td><td>${time(d.last_checked_at)}</td></tr>`)}</tbody>
</table></div>`
    : html`<p class="empty">No sending domains yet: add the domain your mail comes from below.</p>`
}
${addForm(session, v.form, v.error)}`,
  );
}

function addForm(session: Session, f: NewDomainForm, e: FormError | undefined): Html {
  const p = 'dom-';
  return html`<section class="card" aria-labelledby="h-add">
<h2 id="h-add">Add a domain</h2>
<form method="post" action="${BASE}/domains" class="settings">${csrfField(session)}
${formMessage(e)}
<label for="${p}domain">Domain</label>
<input id="${p}domain" name="domain" type="text" required maxlength="253" autocomplete="off" spellcheck="false" placeholder="mail.example.com" value="${f.domain}"${invalid(e, p, 'domain')}>
${messageFor(e, p, 'domain')}
<p class="muted">The domain in your From addresses. Its DNS records are shown once it is added.</p>
${trackingFields(p, f.open_tracking, f.click_tracking, e)}
${tlsField(p, f.tls, e)}
${returnPathField(p, f.custom_return_path, e)}
<button type="submit">Add domain</button>
</form></section>`;
}

function trackingFields(p: string, opens: boolean, clicks: boolean, e: FormError | undefined): Html {
  const checked = (on: boolean) => (on ? html` checked` : '');
  return html`<fieldset><legend>Tracking</legend>
${messageFor(e, p, 'open_tracking')}${messageFor(e, p, 'click_tracking')}
<label class="check" for="${p}opens"><input type="checkbox" id="${p}opens" name="open_tracking" value="true"${checked(opens)}> Track opens</label>
<label class="check" for="${p}clicks"><input type="checkbox" id="${p}clicks" name="click_tracking" value="true"${checked(clicks)}> Track clicks</label>
</fieldset>`;
}

function tlsField(p: string, tls: string, e: FormError | undefined): Html {
  return html`<label for="${p}tls">TLS to receiving servers</label>
<select id="${p}tls" name="tls"${invalid(e, p, 'tls')}>${TLS_MODES.map((m) => html`<option value="${m}"${m === tls ? html` selected` : ''}>${m}</option>`)}</select>
${messageFor(e, p, 'tls')}`;
}

function returnPathField(p: string, value: string, e: FormError | undefined): Html {
  return html`<label for="${p}custom_return_path">Return path subdomain</label>
<input id="${p}custom_return_path" name="custom_return_path" value="${value}" autocomplete="off" spellcheck="false"${invalid(e, p, 'custom_return_path')}>
${messageFor(e, p, 'custom_return_path')}
<p class="muted">Lower-case letters, digits and hyphens, up to 30: bounces come back to this subdomain.</p>`;
}

export interface DomainView {
  /** what the last action did, said in a status line */
  done?: string;
  /** the settings form, refused: what it was sent with */
  settings?: { values: Omit<NewDomainForm, 'domain'>; error: FormError };
}

export function domainPage(session: Session, d: DomainJson, insights: InsightsJson, v: DomainView = {}): Html {
  return layout(
    { title: d.domain, section: '/domains', session },
    html`<p class="crumbs"><a href="${BASE}/domains">Domains</a></p>
<h1>${d.domain} ${badge(d.status)}</h1>
${v.done ? html`<p class="note" role="status">${v.done}</p>` : ''}
${d.failure_reason ? html`<p class="note" role="note">${d.failure_reason}</p>` : ''}
<dl class="facts">
  <div><dt>Id</dt><dd><code>${d.id}</code></dd></div>
  <div><dt>Verified</dt><dd>${time(d.verified_at)}</dd></div>
  <div><dt>Last checked</dt><dd>${time(d.last_checked_at)}</dd></div>
</dl>
<div class="actions">
<form method="post" action="${BASE}/domains/${d.id}/verify">${csrfField(session)}<button type="submit">Verify now</button></form>
<a class="button-link danger" href="${BASE}/domains/${d.id}/delete">Delete domain…</a>
</div>
${records(d)}
${settings(session, d, v.settings)}
${insightsSection(insights)}`,
  );
}

function records(d: DomainJson): Html {
  return html`<section aria-labelledby="h-records"><h2 id="h-records">DNS records</h2>
<p>Publish the required records at your DNS provider; the others make the domain's mail align and report (SPF, DMARC).</p>
<div class="scroll"><table class="records">
<thead><tr><th scope="col">Purpose</th><th scope="col">Type</th><th scope="col">Name</th><th scope="col">Value</th><th scope="col">Last check</th></tr></thead>
<tbody>${d.records.map(
    (r) => html`<tr>
<td>${r.purpose.replace(/_/g, ' ')}${r.required ? html` <span class="tag">required</span>` : ''}</td>
<td>${r.type}${r.priority !== undefined ? html` <span class="muted">priority ${r.priority}</span>` : ''}</td>
<td><code class="record">${r.name}</code> <button type="button" class="secondary copy" data-copy="${r.name}">Copy<span class="visually-hidden"> name of the ${r.purpose} ${r.type} record</span></button></td>
<td><code class="record">${r.value}</code> <button type="button" class="secondary copy" data-copy="${r.value}">Copy<span class="visually-hidden"> value of the ${r.purpose} ${r.type} record</span></button></td>
<td>${badge(r.dns)}</td>
</tr>`,
  )}</tbody></table></div></section>`;
}

function settings(session: Session, d: DomainJson, refused: DomainView['settings']): Html {
  const f = refused?.values ?? d;
  const e = refused?.error;
  const p = 'set-';
  return html`<section aria-labelledby="h-settings"><h2 id="h-settings">Settings</h2>
<form method="post" action="${BASE}/domains/${d.id}/settings" class="settings">${csrfField(session)}
${formMessage(e)}
${d.tracking.available ? '' : html`<p class="muted">Tracking needs <code>http.public_url</code> in the appliance's configuration; until then these settings are kept but track nothing.</p>`}
${trackingFields(p, f.open_tracking, f.click_tracking, e)}
${tlsField(p, f.tls, e)}
${returnPathField(p, f.custom_return_path, e)}
<button type="submit">Save settings</button>
</form></section>`;
}

/** The confirmation before a delete: what stops, and the button that does it. */
export function deleteDomainPage(session: Session, d: DomainJson): Html {
  return layout(
    { title: `Delete ${d.domain}`, section: '/domains', session },
    html`<p class="crumbs"><a href="${BASE}/domains">Domains</a> › <a href="${BASE}/domains/${d.id}">${d.domain}</a></p>
<h1>Delete ${d.domain}?</h1>
<p>Live sends from it stop at once: the API refuses emails from its addresses (<code>domain_not_verified</code>) until it is added and verified again, which starts over with new DNS records to publish.</p>
<form method="post" action="${BASE}/domains/${d.id}/delete">${csrfField(session)}<button type="submit" class="danger">Delete domain</button> <a href="${BASE}/domains/${d.id}">Keep it</a></form>`,
  );
}
