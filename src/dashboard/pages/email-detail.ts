import { html, type Html } from './html.js';
import { BASE, badge, csrfField, layout, time } from './layout.js';
import { outcomeBadge, type EmailJson, type EventJson } from './emails.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';
import { reasonInfo } from '../../modules/receiving/bounces/reasons.js';

// One email's page: what it is, its content, and the part that changes as it is delivered (its
// status, recipients and timeline), which the page refreshes until nothing will change any more.

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

export function emailPage(
  session: Session,
  e: EmailJson,
  events: EventJson[],
  content: { html: string | null; text: string | null },
  now: number,
): Html {
  return layout(
    { title: e.subject || e.id, section: '/emails', session },
    html`<p class="crumbs"><a href="${BASE}/emails">Emails</a></p>
<h1>${e.subject || '(no subject)'}</h1>
${emailFacts(e)}
${cancellable(e) ? cancelForm(session, e) : ''}
<section aria-labelledby="h-state" data-live-src="${BASE}/emails/${e.id}/state" aria-live="polite">
${emailState(e, events, now)}
</section>
${contentSection(e.id, content)}`,
  );
}

/** POST /v1/emails/{id}/cancel takes an email that waits for its time, or has not been tried yet. */
const cancellable = (e: EmailJson) => e.status === 'scheduled' || (e.status === 'queued' && e.attempts === 0);

function cancelForm(session: Session, e: EmailJson): Html {
  return html`<form method="post" action="${BASE}/emails/${e.id}/cancel">${csrfField(session)}<button type="submit" class="secondary">Cancel this email</button> <span class="muted">None of its recipients gets it.</span></form>`;
}

function emailFacts(e: EmailJson): Html {
  return html`<dl class="facts">
  <div><dt>Id</dt><dd><code>${e.id}</code></dd></div>
  <div><dt>From</dt><dd>${e.from}</dd></div>
  <div><dt>To</dt><dd>${e.to.join(', ')}</dd></div>
  ${e.cc.length ? html`<div><dt>Cc</dt><dd>${e.cc.join(', ')}</dd></div>` : ''}
  <div><dt>Created</dt><dd>${time(e.created_at)}</dd></div>
  ${e.scheduled_at ? html`<div><dt>Scheduled for</dt><dd>${time(e.scheduled_at)}</dd></div>` : ''}
  <div><dt>Environment</dt><dd>${e.environment}${e.environment === 'test' ? ' (simulated: nothing leaves the appliance)' : ''}</dd></div>
  ${e.tags && Object.keys(e.tags).length ? html`<div><dt>Tags</dt><dd>${Object.entries(e.tags).map(([k, v]) => html`<span class="tag">${k}: ${v}</span> `)}</dd></div>` : ''}
  ${e.provider_message_id ? html`<div><dt>Message-ID</dt><dd><code>${e.provider_message_id}</code></dd></div>` : ''}
</dl>`;
}

function contentSection(id: string, content: { html: string | null; text: string | null }): Html {
  return html`<section aria-labelledby="h-content">
<h2 id="h-content">Content</h2>
${content.html !== null ? html`<h3>HTML</h3><iframe class="preview" title="The email's HTML, with scripts and remote content blocked" sandbox src="${BASE}/emails/${id}/html"></iframe>` : ''}
${content.text !== null ? html`<h3>Text</h3><pre class="text-part">${content.text}</pre>` : ''}
</section>`;
}

/** The part of an email's page that changes: its status, recipients and timeline (also served alone, for the live refresh). */
export function emailState(e: EmailJson, events: EventJson[], now: number): Html {
  return html`<div${settled(e, events, now) ? html` data-final="true"` : ''}>
<h2 id="h-state">Status ${outcomeBadge(e)}</h2>
${e.status_reason ? html`<p>${e.status_reason}</p>` : ''}
${e.status === 'ambiguous' ? ambiguousNote(e.id) : ''}
<h3>Recipients</h3>
<div class="scroll"><table>
<thead><tr><th scope="col">Address</th><th scope="col">Kind</th><th scope="col">Status</th><th scope="col">Why</th></tr></thead>
<tbody>${e.recipients.map((r) => html`<tr><td class="addr">${r.address}</td><td>${r.kind}</td><td>${badge(r.status)}</td><td class="why">${r.bounce ? bounceWhy(r.bounce, e.environment === 'live') : r.status === 'deferred' ? deferredWhy(r.address, events) : '—'}</td></tr>`)}</tbody>
</table></div>
<h3>Timeline</h3>
<ol class="timeline">
<li class="ev t-email-queued"><div class="ev-head"><span class="ev-type">queued</span> ${time(e.created_at)} <span class="muted">accepted by the API and stored</span></div></li>
${events.map(timelineEntry)}
</ol>
</div>`;
}

/**
 * Why a deferred recipient waits: the reply of its last delay (the server's, or the provider's throttle
 * or warm-up that holds its mail back; docs/delivery.md), and when it is tried again.
 */
function deferredWhy(address: string, events: EventJson[]): Html {
  const last = events.filter((x) => x.type === 'email.delivery_delayed' && x.recipient === address).at(-1);
  const d = last?.data.details;
  if (!d) return html`Waiting for its next attempt.`;
  const next = typeof d.next_attempt_at === 'string' ? html` Next attempt ${time(d.next_attempt_at)}.` : '';
  return html`Waiting: ${typeof d.diagnostic === 'string' ? d.diagnostic : 'the server asked to try again later'}.${next}`;
}

function ambiguousNote(id: string): Html {
  return html`<div class="note" role="note"><p><strong>Ambiguous: the receiving server may or may not have this message.</strong>
The connection ended after the message was sent and before the server confirmed it. Posthorn never sends such a message again by itself, so that nobody gets it twice.</p>
<p>If the recipient did not get it, an operator can send it again with <code>posthorn queue retry ${id}</code>.</p></div>`;
}

/** A bounce's reason (docs/bounces.md), what it means, and whether the address was suppressed for it (live mail only). */
function bounceWhy(b: { bounce_type: string; reason: string | null }, live: boolean): Html {
  const meaning = meaningOf(b.reason);
  const hard = b.bounce_type === 'Permanent';
  const outcome = !live
    ? hard
      ? 'Simulated: a live bounce like this suppresses the address.'
      : 'Simulated: a live bounce like this keeps the address.'
    : hard
      ? 'Address suppressed: it does not take mail.'
      : 'Address kept: only this message failed.';
  return html`<code>${b.reason ?? 'undefined'}</code>${meaning ? html` <span class="muted">${meaning}</span>` : ''}<br>${outcome}`;
}

const meaningOf = (reason: unknown): string | null => reasonInfo(reason)?.meaning ?? null;

/** A detail's value as shown: a bounce reason with what it means. */
function detailValue(key: string, v: unknown): string {
  // numbers, booleans and objects (the entries shown are never null or undefined) as JSON writes them
  if (typeof v !== 'string') return JSON.stringify(v) ?? '';
  const meaning = key === 'reason' ? meaningOf(v) : null;
  return meaning ? `${v}: ${meaning}` : v;
}

function timelineEntry(ev: EventJson): Html {
  const details = Object.entries(ev.data.details ?? {}).filter(([, v]) => v !== null && v !== undefined && v !== '');
  return html`<li class="ev t-${ev.type.replace('.', '-')}">
<div class="ev-head"><span class="ev-type">${ev.type.replace(/^email\./, '').replace(/_/g, ' ')}</span> ${time(ev.created_at)}${ev.recipient ? html` <span class="addr">${ev.recipient}</span>` : ''}</div>
${details.length ? html`<dl class="details">${details.map(([k, v]) => html`<div><dt>${k.replace(/_/g, ' ')}</dt><dd>${detailValue(k, v)}</dd></div>`)}</dl>` : ''}
${ev.webhook_deliveries.length ? html`<ul class="hooks" aria-label="Webhook deliveries">${ev.webhook_deliveries.map((d) => html`<li>webhook ${d.endpoint_id}: ${badge(d.status)} after ${d.attempts} attempt${d.attempts === 1 ? '' : 's'}${d.last_status_code ? html`, HTTP ${d.last_status_code}` : ''}${d.last_error ? html`, ${d.last_error}` : ''}</li>`)}</ul>` : ''}
</li>`;
}
