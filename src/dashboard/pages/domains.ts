import { barChart, percent, rateChart } from './charts.js';
import { html, type Html } from './html.js';
import { BASE, badge, csrfField, layout, time } from './layout.js';
import type { Session } from '../../modules/sessions/sessions.service.js';

// interface §2.2 and §2.3 (with `daily` and `thresholds`), as the pages read them.
export interface DomainJson {
  id: string;
  domain: string;
  status: string;
  failure_reason: string | null;
  verified_at: string | null;
  last_checked_at: string | null;
  created_at: string;
  records: Array<{ purpose: string; required: boolean; type: string; name: string; value: string; priority?: number; dns: string }>;
  dns_summary: { required_total: number; required_found: number; checked: boolean };
  open_tracking: boolean;
  click_tracking: boolean;
  tracking: { available: boolean };
  tls: string;
  custom_return_path: string;
}

interface Threshold {
  watch: number;
  at_risk: number;
}

export interface InsightsJson {
  status: string;
  window_days: number;
  totals: Record<string, number>;
  rates: Record<string, number | null>;
  setup: { dkim: string; spf_return_path: string; dmarc: string; dkim_key?: { active_selector: string; next_rotation_at: string | null } };
  recommendations: Array<{ level: string; code: string; title: string; detail: string }>;
  thresholds: { bounce_rate: Threshold; complaint_rate: Threshold };
  daily: Array<{ date: string; recipients: number; delivered: number; bounced: number; complained: number; failed: number; bounce_rate: number; complaint_rate: number }>;
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

function insightsSection(i: InsightsJson): Html {
  const days = i.daily.map((x) => ({ ...x, label: x.date.slice(5) }));
  return html`<section aria-labelledby="h-insights"><h2 id="h-insights">Insights, last ${i.window_days} days ${badge(i.status)}</h2>
<dl class="facts">
  <div><dt>Recipients reached</dt><dd>${i.totals.delivered! + i.totals.bounced! + i.totals.failed!}</dd></div>
  <div><dt>Delivered</dt><dd>${percent(i.rates.delivered ?? 0)}</dd></div>
  <div><dt>Bounce rate</dt><dd>${percent(i.rates.bounced ?? 0)} <span class="muted">(watch at ${percent(i.thresholds.bounce_rate.watch)})</span></dd></div>
  <div><dt>Complaint rate</dt><dd>${percent(i.rates.complained ?? 0)} <span class="muted">(watch at ${percent(i.thresholds.complaint_rate.watch)})</span></dd></div>
  <div><dt>DKIM · SPF · DMARC</dt><dd>${i.setup.dkim} · ${i.setup.spf_return_path} · ${i.setup.dmarc}</dd></div>
  ${i.setup.dkim_key ? html`<div><dt>Signing key</dt><dd>selector ${i.setup.dkim_key.active_selector}; next rotation ${i.setup.dkim_key.next_rotation_at?.slice(0, 10) ?? 'only by hand'}</dd></div>` : ''}
</dl>
${i.recommendations.length ? html`<ul class="recommendations">${i.recommendations.map((r) => html`<li class="rec-${r.level}"><strong>${r.title}</strong> <span class="badge">${r.level}</span><br>${r.detail}</li>`)}</ul>` : ''}
<h3>Recipients per day</h3>
${barChart('Recipients per day', 'Delivered recipients in green, bounced and failed in red, per UTC day; the table below has the numbers.', days.map((x) => ({ label: x.label, parts: [{ value: x.delivered, className: 'ok' }, { value: x.bounced + x.failed, className: 'bad' }] })))}
<h3>Bounce rate per day</h3>
${rateChart('Bounce rate per day', 'The share of reached recipients that bounced, per UTC day, against the watch and at-risk thresholds.', days.map((x) => ({ label: x.label, rate: x.bounce_rate })), i.thresholds.bounce_rate)}
<h3>Complaint rate per day</h3>
${rateChart('Complaint rate per day', 'The share of delivered recipients that complained, per UTC day, against the watch and at-risk thresholds.', days.map((x) => ({ label: x.label, rate: x.complaint_rate })), i.thresholds.complaint_rate)}
<details><summary>The numbers per day</summary><div class="scroll"><table>
<thead><tr><th scope="col">Day (UTC)</th><th scope="col">Recipients</th><th scope="col">Delivered</th><th scope="col">Bounced</th><th scope="col">Complained</th><th scope="col">Failed</th></tr></thead>
<tbody>${i.daily.map((x) => html`<tr><td>${x.date}</td><td>${x.recipients}</td><td>${x.delivered}</td><td>${x.bounced}</td><td>${x.complained}</td><td>${x.failed}</td></tr>`)}</tbody>
</table></div></details>
</section>`;
}
