import { html, type Html } from './html.js';
import { BASE, badge, csrfField, layout, time } from './layout.js';
import { insightsSection, type InsightsJson } from './domain-insights.js';
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

export function domainListPage(session: Session, domains: DomainJson[]): Html {
  return layout(
    { title: 'Domains', section: '/domains', session },
    html`<h1>Domains</h1>
${
  domains.length
    ? html`<div class="scroll"><table>
<thead><tr><th scope="col">Domain</th><th scope="col">Status</th><th scope="col">Required records found</th><th scope="col">Last checked</th></tr></thead>
<tbody>${domains.map((d) => html`<tr><td><a href="${BASE}/domains/${d.id}">${d.domain}</a></td><td>${badge(d.status)}</td><td>${d.dns_summary.required_found} of ${d.dns_summary.required_total}</td><td>${time(d.last_checked_at)}</td></tr>`)}</tbody>
</table></div>`
    : html`<p class="empty">No sending domains yet. Add one with <code>POST /v1/domains</code>.</p>`
}`,
  );
}

export function domainPage(session: Session, d: DomainJson, insights: InsightsJson): Html {
  return layout(
    { title: d.domain, section: '/domains', session },
    html`<p class="crumbs"><a href="${BASE}/domains">Domains</a></p>
<h1>${d.domain} ${badge(d.status)}</h1>
${d.failure_reason ? html`<p class="note" role="note">${d.failure_reason}</p>` : ''}
<dl class="facts">
  <div><dt>Id</dt><dd><code>${d.id}</code></dd></div>
  <div><dt>Verified</dt><dd>${time(d.verified_at)}</dd></div>
  <div><dt>Last checked</dt><dd>${time(d.last_checked_at)}</dd></div>
</dl>
<form method="post" action="${BASE}/domains/${d.id}/verify">${csrfField(session)}<button type="submit">Verify now</button></form>
${records(d)}
${settings(session, d)}
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

function settings(session: Session, d: DomainJson): Html {
  const checked = (on: boolean) => (on ? html` checked` : '');
  return html`<section aria-labelledby="h-settings"><h2 id="h-settings">Settings</h2>
<form method="post" action="${BASE}/domains/${d.id}/settings" class="settings">${csrfField(session)}
<fieldset><legend>Tracking</legend>
${d.tracking.available ? '' : html`<p class="muted">Tracking needs <code>http.public_url</code> in the appliance's configuration; until then these settings are kept but track nothing.</p>`}
<label class="check"><input type="checkbox" name="open_tracking" value="true"${checked(d.open_tracking)}> Track opens</label>
<label class="check"><input type="checkbox" name="click_tracking" value="true"${checked(d.click_tracking)}> Track clicks</label>
</fieldset>
<label for="tls">TLS to receiving servers</label>
<select id="tls" name="tls">${['opportunistic', 'enforced'].map((m) => html`<option value="${m}"${m === d.tls ? html` selected` : ''}>${m}</option>`)}</select>
<label for="rp">Return path subdomain</label>
<input id="rp" name="custom_return_path" value="${d.custom_return_path}" pattern="[a-z0-9]([a-z0-9\\-]{0,28}[a-z0-9])?">
<button type="submit">Save settings</button>
</form></section>`;
}
