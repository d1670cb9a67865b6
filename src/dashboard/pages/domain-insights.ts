import { barChart, percent, rateChart } from './charts.js';
import { html, type Html } from './html.js';
import { badge } from './layout.js';

// A domain's delivery insights on its page: the totals and setup, what to do, and the rates per day
// against the thresholds.

interface Threshold {
  watch: number;
  at_risk: number;
}

// interface §2.3 (with `daily` and `thresholds`), as the page reads it.
export interface InsightsJson {
  status: string;
  window_days: number;
  totals: Record<string, number>;
  rates: Record<string, number | null>;
  setup: {
    dkim: string;
    spf_return_path: string;
    dmarc: string;
    dkim_key?: { active_selector: string; next_rotation_at: string | null };
  };
  recommendations: Array<{ level: string; code: string; title: string; detail: string }>;
  thresholds: { bounce_rate: Threshold; complaint_rate: Threshold };
  daily: Array<{
    date: string;
    recipients: number;
    delivered: number;
    bounced: number;
    complained: number;
    failed: number;
    bounce_rate: number;
    complaint_rate: number;
  }>;
}

export function insightsSection(i: InsightsJson): Html {
  return html`<section aria-labelledby="h-insights"><h2 id="h-insights">Insights, last ${i.window_days} days ${badge(i.status)}</h2>
${insightFacts(i)}
${i.recommendations.length ? html`<ul class="recommendations">${i.recommendations.map((r) => html`<li class="rec-${r.level}"><strong>${r.title}</strong> <span class="badge">${r.level}</span><br>${r.detail}</li>`)}</ul>` : ''}
${dailyCharts(i)}
${dailyTable(i)}
</section>`;
}

function insightFacts(i: InsightsJson): Html {
  return html`<dl class="facts">
  <div><dt>Recipients reached</dt><dd>${i.totals.delivered + i.totals.bounced + i.totals.failed}</dd></div>
  <div><dt>Delivered</dt><dd>${percent(i.rates.delivered ?? 0)}</dd></div>
  <div><dt>Bounce rate</dt><dd>${percent(i.rates.bounced ?? 0)} <span class="muted">(watch at ${percent(i.thresholds.bounce_rate.watch)})</span></dd></div>
  <div><dt>Complaint rate</dt><dd>${percent(i.rates.complained ?? 0)} <span class="muted">(watch at ${percent(i.thresholds.complaint_rate.watch)})</span></dd></div>
  <div><dt>DKIM · SPF · DMARC</dt><dd>${i.setup.dkim} · ${i.setup.spf_return_path} · ${i.setup.dmarc}</dd></div>
  ${i.setup.dkim_key ? html`<div><dt>Signing key</dt><dd>selector ${i.setup.dkim_key.active_selector}; next rotation ${i.setup.dkim_key.next_rotation_at?.slice(0, 10) ?? 'only by hand'}</dd></div>` : ''}
</dl>`;
}

function dailyCharts(i: InsightsJson): Html {
  const days = i.daily.map((x) => ({ ...x, label: x.date.slice(5) }));
  return html`<h3>Recipients per day</h3>
${barChart(
  'Recipients per day',
  'Delivered recipients in green, bounced and failed in red, per UTC day; the table below has the numbers.',
  days.map((x) => ({
    label: x.label,
    parts: [
      { value: x.delivered, className: 'ok' },
      { value: x.bounced + x.failed, className: 'bad' },
    ],
  })),
)}
<h3>Bounce rate per day</h3>
${rateChart(
  'Bounce rate per day',
  'The share of reached recipients that bounced, per UTC day, against the watch and at-risk thresholds.',
  days.map((x) => ({ label: x.label, rate: x.bounce_rate })),
  i.thresholds.bounce_rate,
)}
<h3>Complaint rate per day</h3>
${rateChart(
  'Complaint rate per day',
  'The share of delivered recipients that complained, per UTC day, against the watch and at-risk thresholds.',
  days.map((x) => ({ label: x.label, rate: x.complaint_rate })),
  i.thresholds.complaint_rate,
)}`;
}

/** The charts' numbers, for a reader who cannot see them. */
function dailyTable(i: InsightsJson): Html {
  return html`<details><summary>The numbers per day</summary><div class="scroll"><table>
<thead><tr><th scope="col">Day (UTC)</th><th scope="col">Recipients</th><th scope="col">Delivered</th><th scope="col">Bounced</th><th scope="col">Complained</th><th scope="col">Failed</th></tr></thead>
<tbody>${i.daily.map((x) => html`<tr><td>${x.date}</td><td>${x.recipients}</td><td>${x.delivered}</td><td>${x.bounced}</td><td>${x.complained}</td><td>${x.failed}</td></tr>`)}</tbody>
</table></div></details>`;
}
