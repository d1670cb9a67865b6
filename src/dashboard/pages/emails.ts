import { html, queryString, type Html } from './html.js';
import { BASE, badge, layout, time } from './layout.js';
import { EMAIL_STATUSES } from '../../modules/emails/email.js';
import type { Session } from '../../modules/sessions/sessions.service.js';

// The API's JSON shapes (interface §2.1, GET /v1/emails/{id}/events), as the pages read them.
export interface EmailJson {
  id: string;
  status: string;
  status_reason: string | null;
  environment: string;
  from: string;
  to: string[];
  cc: string[];
  subject: string;
  tags: Record<string, string> | null;
  template_id: string | null;
  provider_message_id: string | null;
  attempts: number;
  scheduled_at: string | null;
  recipients: Array<{ address: string; kind: string; status: string }>;
  created_at: string;
  updated_at: string;
}

export interface EventJson {
  id: string;
  type: string;
  recipient: string | null;
  data: { details?: Record<string, unknown> };
  created_at: string;
  webhook_deliveries: Array<{ id: string; endpoint_id: string; status: string; attempts: number; last_status_code: number | null; last_error: string | null }>;
}


export interface EmailFilter {
  status?: string;
  to?: string;
  /** name:value */
  tag?: string;
  /** first and last day shown, YYYY-MM-DD (UTC) */
  from?: string;
  until?: string;
}

export function emailListPage(session: Session, page: { data: EmailJson[]; next_cursor: string | null }, filter: EmailFilter): Html {
  const rows = page.data.map(
    (e) => html`<tr>
  <td>${time(e.created_at)}</td>
  <td><a href="${BASE}/emails/${e.id}">${e.subject || '(no subject)'}</a></td>
  <td class="addr">${e.to.join(', ')}</td>
  <td>${outcomeBadge(e)}</td>
</tr>`,
  );
  return layout(
    { title: 'Emails', section: '/emails', session },
    html`<h1>Emails</h1>
<form class="filters" method="get" action="${BASE}/emails" role="search" aria-label="Filter emails">
  <div><label for="f-status">Status</label>
  <select id="f-status" name="status"><option value="">any</option>${EMAIL_STATUSES.map((s) => html`<option value="${s}"${s === filter.status ? html` selected` : ''}>${s}</option>`)}</select></div>
  <div><label for="f-to">Recipient</label>
  <input id="f-to" name="to" type="search" value="${filter.to ?? ''}" placeholder="someone@example.com"></div>
  <div><label for="f-tag">Tag</label>
  <input id="f-tag" name="tag" type="search" value="${filter.tag ?? ''}" placeholder="kind:receipt"></div>
  <div><label for="f-from">From day (UTC)</label>
  <input id="f-from" name="from" type="date" value="${filter.from ?? ''}"></div>
  <div><label for="f-until">Until day (UTC)</label>
  <input id="f-until" name="until" type="date" value="${filter.until ?? ''}"></div>
  <div><button type="submit">Filter</button></div>
</form>
${
  page.data.length
    ? html`<div class="scroll"><table>
<caption class="visually-hidden">Emails, newest first</caption>
<thead><tr><th scope="col">Created</th><th scope="col">Subject</th><th scope="col">To</th><th scope="col">Status</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`
    : html`<p class="empty">No emails${Object.values(filter).some(Boolean) ? ' match these filters' : ' yet'}.</p>`
}
${page.next_cursor ? html`<p class="pager"><a href="${BASE}/emails${queryString({ ...filter, cursor: page.next_cursor })}" rel="next">Older emails →</a></p>` : ''}`,
  );
}

// Recipient outcomes the list must not hide behind the email's status, worst first: an email is
// `accepted` once one recipient is, whatever happened to the others.
const TROUBLE = ['bounced', 'complained', 'failed', 'ambiguous', 'deferred', 'suppressed'] as const;

/**
 * What the emails list says of an email (docs/dashboard.md): the worst
 * recipient outcome in TROUBLE if any; `delivered` once every recipient is;
 * else the email's status (queued, scheduled, submitting, or `accepted`
 * while a recipient still waits for its first attempt, which is neutral).
 */
export function listOutcome(e: Pick<EmailJson, 'status' | 'recipients'>): string {
  const worst = TROUBLE.find((s) => e.recipients.some((r) => r.status === s));
  if (worst) return worst;
  if (e.recipients.length && e.recipients.every((r) => r.status === 'delivered')) return 'delivered';
  return e.status;
}

function outcomeBadge(e: EmailJson): Html {
  const outcome = listOutcome(e);
  const count = e.recipients.filter((r) => r.status === outcome).length;
  const title = outcome === e.status ? `email ${e.status}` : `email ${e.status}; ${count} of ${e.recipients.length} recipient${e.recipients.length === 1 ? '' : 's'} ${outcome}`;
  // accepted with nothing known yet of a recipient says nothing good or bad: no colour
  const tone = outcome === 'accepted' ? '' : ` s-${outcome}`;
  return html`<span class="badge${tone}" title="${title}">${outcome}</span>`;
}

// An email, or one of its recipients, in one of these may still change.
const WAITING = ['queued', 'scheduled', 'submitting', 'deferred'];
// An event's webhook deliveries appear once the dispatcher has fanned it out, a moment after the
// event itself: an event younger than this may still get some.
const FAN_OUT_GRACE_MS = 10_000;

/** Whether nothing will change any more (`now`: ms): the timeline stops refreshing then. */
export function settled(e: EmailJson, events: EventJson[], now: number): boolean {
  // the email is `accepted` once one recipient is: others may still be queued or deferred
  const waiting = WAITING.includes(e.status) || e.recipients.some((r) => WAITING.includes(r.status));
  const hooksPending = events.some((ev) => ev.webhook_deliveries.some((d) => d.status === 'pending'));
  const recent = events.some((ev) => now - Date.parse(ev.created_at) < FAN_OUT_GRACE_MS);
  return !waiting && !hooksPending && !recent;
}

export function emailPage(session: Session, e: EmailJson, events: EventJson[], content: { html: string | null; text: string | null }, now: number): Html {
  return layout(
    { title: e.subject || e.id, section: '/emails', session },
    html`<p class="crumbs"><a href="${BASE}/emails">Emails</a></p>
<h1>${e.subject || '(no subject)'}</h1>
<dl class="facts">
  <div><dt>Id</dt><dd><code>${e.id}</code></dd></div>
  <div><dt>From</dt><dd>${e.from}</dd></div>
  <div><dt>To</dt><dd>${e.to.join(', ')}</dd></div>
  ${e.cc.length ? html`<div><dt>Cc</dt><dd>${e.cc.join(', ')}</dd></div>` : ''}
  <div><dt>Created</dt><dd>${time(e.created_at)}</dd></div>
  ${e.scheduled_at ? html`<div><dt>Scheduled for</dt><dd>${time(e.scheduled_at)}</dd></div>` : ''}
  <div><dt>Environment</dt><dd>${e.environment}${e.environment === 'test' ? ' (simulated: nothing leaves the appliance)' : ''}</dd></div>
  ${e.tags && Object.keys(e.tags).length ? html`<div><dt>Tags</dt><dd>${Object.entries(e.tags).map(([k, v]) => html`<span class="tag">${k}: ${v}</span> `)}</dd></div>` : ''}
  ${e.provider_message_id ? html`<div><dt>Message-ID</dt><dd><code>${e.provider_message_id}</code></dd></div>` : ''}
</dl>
<section aria-labelledby="h-state" data-live-src="${BASE}/emails/${e.id}/state" aria-live="polite">
${emailState(e, events, now)}
</section>
<section aria-labelledby="h-content">
<h2 id="h-content">Content</h2>
${content.html !== null ? html`<h3>HTML</h3><iframe class="preview" title="The email's HTML, with scripts and remote content blocked" sandbox src="${BASE}/emails/${e.id}/html"></iframe>` : ''}
${content.text !== null ? html`<h3>Text</h3><pre class="text-part">${content.text}</pre>` : ''}
</section>`,
  );
}

/** The part of an email's page that changes: its status, recipients and timeline (also served alone, for the live refresh). */
export function emailState(e: EmailJson, events: EventJson[], now: number): Html {
  return html`<div${settled(e, events, now) ? html` data-final="true"` : ''}>
<h2 id="h-state">Status ${outcomeBadge(e)}</h2>
${e.status_reason ? html`<p>${e.status_reason}</p>` : ''}
${e.status === 'ambiguous' ? ambiguousNote(e.id) : ''}
<h3>Recipients</h3>
<div class="scroll"><table>
<thead><tr><th scope="col">Address</th><th scope="col">Kind</th><th scope="col">Status</th></tr></thead>
<tbody>${e.recipients.map((r) => html`<tr><td class="addr">${r.address}</td><td>${r.kind}</td><td>${badge(r.status)}</td></tr>`)}</tbody>
</table></div>
<h3>Timeline</h3>
<ol class="timeline">
<li class="ev t-email-queued"><div class="ev-head"><span class="ev-type">queued</span> ${time(e.created_at)} <span class="muted">accepted by the API and stored</span></div></li>
${events.map(timelineEntry)}
</ol>
</div>`;
}

function ambiguousNote(id: string): Html {
  return html`<div class="note" role="note"><p><strong>Ambiguous: the receiving server may or may not have this message.</strong>
The connection ended after the message was sent and before the server confirmed it. Posthorn never sends such a message again by itself, so that nobody gets it twice.</p>
<p>If the recipient did not get it, an operator can send it again with <code>posthorn queue retry ${id}</code>.</p></div>`;
}

function timelineEntry(ev: EventJson): Html {
  const details = Object.entries(ev.data.details ?? {}).filter(([, v]) => v !== null && v !== undefined && v !== '');
  return html`<li class="ev t-${ev.type.replace('.', '-')}">
<div class="ev-head"><span class="ev-type">${ev.type.replace(/^email\./, '').replace(/_/g, ' ')}</span> ${time(ev.created_at)}${ev.recipient ? html` <span class="addr">${ev.recipient}</span>` : ''}</div>
${details.length ? html`<dl class="details">${details.map(([k, v]) => html`<div><dt>${k.replace(/_/g, ' ')}</dt><dd>${typeof v === 'object' ? JSON.stringify(v) : String(v)}</dd></div>`)}</dl>` : ''}
${ev.webhook_deliveries.length ? html`<ul class="hooks" aria-label="Webhook deliveries">${ev.webhook_deliveries.map((d) => html`<li>webhook ${d.endpoint_id}: ${badge(d.status)} after ${d.attempts} attempt${d.attempts === 1 ? '' : 's'}${d.last_status_code ? html`, HTTP ${d.last_status_code}` : ''}${d.last_error ? html`, ${d.last_error}` : ''}</li>`)}</ul>` : ''}
</li>`;
}
