import { barChart } from './charts.js';
import { html, type Html } from './html.js';
import { badge, BASE, layout } from './layout.js';
import { broadcastUrl } from './broadcasts.js';
import type { BroadcastCounts, BroadcastJson } from './broadcast-form.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

// A broadcast's report (pure): its counts, its bounces by reason, and its outcomes per hour as
// charts drawn on the server, with the numbers in a table beside them.

/** GET /v1/broadcasts/{id}/report as the page reads it. */
export interface ReportJson {
  status: string;
  counts: BroadcastCounts;
  bounces: {
    by_reason: Array<{ reason: string; count: number }>;
    by_type: Array<{ bounce_type: string; count: number }>;
  };
  hourly: Array<
    { hour: string } & Pick<
      BroadcastCounts,
      'sent' | 'delivered' | 'bounced' | 'complained' | 'opened' | 'clicked' | 'unsubscribed'
    >
  >;
}

const rate = (n: number, of: number) => (of > 0 ? ` (${((n / of) * 100).toFixed(1).replace(/\.0$/, '')}%)` : '');

/** The report's parts, refreshed by the script while the broadcast sends (also served alone). */
export function reportPart(b: BroadcastJson, r: ReportJson): Html {
  const c = r.counts;
  const row = (label: string, n: number, of?: number) =>
    html`<tr><th scope="row">${label}</th><td>${n}${of === undefined ? '' : rate(n, of)}</td></tr>`;
  return html`<div${r.status === 'scheduled' || r.status === 'sending' ? '' : html` data-final="true"`}>
<h2 id="h-totals">Totals ${badge(r.status)}</h2>
<div class="scroll"><table class="report-counts">
<caption class="visually-hidden">Counts of the broadcast; rates of the emails sent</caption>
<tbody>
${row('Recipients', c.recipients)}${row('Sent', c.sent)}${row('Delivered', c.delivered, c.sent)}${row('Bounced', c.bounced, c.sent)}${row('Complained', c.complained, c.sent)}${row('Opened', c.opened, c.sent)}${row('Clicked', c.clicked, c.sent)}${row('Unsubscribed', c.unsubscribed, c.sent)}${row('Suppressed', c.suppressed)}${row('Skipped', c.skipped)}${row('Failed', c.failed)}
</tbody></table></div>
<h2 id="h-bounces">Bounces by reason</h2>
${
  r.bounces.by_reason.length
    ? html`<div class="scroll"><table class="bounce-reasons">
<caption class="visually-hidden">Bounced recipients by the reason the classifier read</caption>
<thead><tr><th scope="col">Reason</th><th scope="col">Recipients</th></tr></thead>
<tbody>${r.bounces.by_reason.map((x) => html`<tr><td><code>${x.reason}</code></td><td>${x.count}</td></tr>`)}</tbody>
</table></div>
<p class="muted">${r.bounces.by_type.map((x) => `${x.bounce_type}: ${x.count}`).join(' · ')}. The reasons are those of <a href="${BASE}/suppressions">bounces and suppressions</a>: a permanent one suppresses the address.</p>`
    : html`<p class="empty">No bounces.</p>`
}
${hourly(b, r)}
</div>`;
}

function hourly(b: BroadcastJson, r: ReportJson): Html {
  if (!r.hourly.length)
    return html`<h2>Over time</h2><p class="empty">Nothing has happened yet: the hours fill in as the emails go out.</p>`;
  const hours = r.hourly.map((h) => ({ ...h, label: `${h.hour.slice(5, 10)} ${h.hour.slice(11, 16)}` }));
  return html`<h2 id="h-time">Over time (UTC hours)</h2>
<h3>Deliveries per hour</h3>
${barChart(
  `Deliveries per hour of ${b.name}`,
  'Emails delivered in green, bounced in red, per UTC hour; the table below has every number.',
  hours.map((h) => ({
    label: h.label,
    parts: [
      { value: h.delivered, className: 'ok' },
      { value: h.bounced, className: 'bad' },
    ],
  })),
)}
<h3>Engagement per hour</h3>
${barChart(
  `Engagement per hour of ${b.name}`,
  'Emails first opened, clicked, complained about and unsubscribed from, stacked per UTC hour; the table below has every number.',
  hours.map((h) => ({
    label: h.label,
    parts: [
      { value: h.opened, className: 'opened' },
      { value: h.clicked, className: 'clicked' },
      { value: h.complained, className: 'bad' },
      { value: h.unsubscribed, className: 'unsubscribed' },
    ],
  })),
)}
<details><summary>The numbers per hour</summary><div class="scroll"><table class="hourly">
<thead><tr><th scope="col">Hour (UTC)</th><th scope="col">Sent</th><th scope="col">Delivered</th><th scope="col">Bounced</th><th scope="col">Complained</th><th scope="col">Opened</th><th scope="col">Clicked</th><th scope="col">Unsubscribed</th></tr></thead>
<tbody>${hours.map((h) => html`<tr><td>${h.hour.slice(0, 13).replace('T', ' ')}:00</td><td>${h.sent}</td><td>${h.delivered}</td><td>${h.bounced}</td><td>${h.complained}</td><td>${h.opened}</td><td>${h.clicked}</td><td>${h.unsubscribed}</td></tr>`)}</tbody>
</table></div></details>`;
}

export function reportPage(session: Session, b: BroadcastJson, r: ReportJson): Html {
  return layout(
    { title: `Report: ${b.name}`, section: '/broadcasts', session },
    html`<p class="crumbs"><a href="${BASE}/broadcasts">Broadcasts</a> › <a href="${broadcastUrl(b.id)}">${b.name}</a></p>
<h1>Report: ${b.name}</h1>
<p class="muted">Test emails of the broadcast are not counted. Opened and clicked count emails with at least one such event; the hours count each email once per hour for each kind of event.</p>
<section aria-labelledby="h-totals" data-live-src="${broadcastUrl(b.id, '/report/state')}" aria-live="polite">${reportPart(b, r)}</section>`,
  );
}
