import { html, queryString, type Html } from './html.js';
import { BASE, badge, csrfField, layout, time } from './layout.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

// The /v1/webhooks shapes, as the pages read them.
export interface EndpointJson {
  id: string;
  url: string;
  events: string[];
  active: boolean;
  description: string | null;
  created_at: string;
}

export interface DeliveryJson {
  id: string;
  event_id: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  attempt_log: Array<{
    attempt: number;
    status_code: number | null;
    response_ms: number;
    error: string | null;
    at: string;
  }>;
}

export function endpointListPage(session: Session, endpoints: EndpointJson[]): Html {
  return layout(
    { title: 'Webhooks', section: '/webhooks', session },
    html`<h1>Webhooks</h1>
${
  endpoints.length
    ? html`<div class="scroll"><table>
<thead><tr><th scope="col">Endpoint</th><th scope="col">Events</th><th scope="col">Active</th><th scope="col">Created</th></tr></thead>
<tbody>${endpoints.map((e) => html`<tr><td class="addr"><a href="${BASE}/webhooks/${e.id}">${e.url}</a>${e.description ? html`<br><span class="muted">${e.description}</span>` : ''}</td><td>${e.events.length}</td><td>${e.active ? 'yes' : 'paused'}</td><td>${time(e.created_at)}</td></tr>`)}</tbody>
</table></div>`
    : html`<p class="empty">No webhook endpoints yet. Add one with <code>POST /v1/webhooks</code>.</p>`
}`,
  );
}

export interface EndpointView {
  endpoint: EndpointJson;
  deliveries: { data: DeliveryJson[]; next_cursor: string | null };
  /** a secret just made by a rotation: shown this once */
  newSecret?: { secret: string; previousExpiresAt: string | null };
  /** a replay just queued */
  replayed?: string;
}

export function endpointPage(session: Session, v: EndpointView): Html {
  const e = v.endpoint;
  return layout(
    { title: e.url, section: '/webhooks', session },
    html`<p class="crumbs"><a href="${BASE}/webhooks">Webhooks</a></p>
<h1 class="addr">${e.url}</h1>
<dl class="facts">
  <div><dt>Id</dt><dd><code>${e.id}</code></dd></div>
  <div><dt>Active</dt><dd>${e.active ? 'yes' : 'paused'}</dd></div>
  <div><dt>Created</dt><dd>${time(e.created_at)}</dd></div>
  ${e.description ? html`<div><dt>Description</dt><dd>${e.description}</dd></div>` : ''}
  <div><dt>Events</dt><dd>${e.events.map((t) => html`<span class="tag">${t}</span> `)}</dd></div>
</dl>
${v.newSecret ? newSecret(v.newSecret) : ''}
<form method="post" action="${BASE}/webhooks/${e.id}/rotate-secret">${csrfField(session)}<button type="submit" class="secondary">Rotate signing secret</button></form>
${v.replayed ? html`<p class="note" role="status">Replay queued for event <code>${v.replayed}</code>: it appears at the top of the log.</p>` : ''}
${deliveryLog(session, e, v.deliveries)}`,
  );
}

function newSecret(s: NonNullable<EndpointView['newSecret']>): Html {
  return html`<div class="note" role="alert"><p><strong>The new signing secret, shown this once:</strong></p>
<p><label for="new-secret">Signing secret</label><input id="new-secret" readonly value="${s.secret}"> <button type="button" class="secondary" data-copy="${s.secret}">Copy</button></p>
<p>Store it in your receiver now: it cannot be shown again.${s.previousExpiresAt ? html` The previous secret keeps signing too until ${time(s.previousExpiresAt)}.` : ''}</p></div>`;
}

function deliveryLog(session: Session, e: EndpointJson, log: EndpointView['deliveries']): Html {
  return html`<section aria-labelledby="h-log"><h2 id="h-log">Delivery log</h2>
${
  log.data.length
    ? html`<div class="scroll"><table class="deliveries">
<thead><tr><th scope="col">Created</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${log.data.map((d) => deliveryRow(session, e, d))}</tbody>
</table></div>`
    : html`<p class="empty">No deliveries yet.</p>`
}
${log.next_cursor ? html`<p class="pager"><a href="${BASE}/webhooks/${e.id}${queryString({ cursor: log.next_cursor })}" rel="next">Older deliveries →</a></p>` : ''}
</section>`;
}

function deliveryRow(session: Session, e: EndpointJson, d: DeliveryJson): Html {
  const answer = d.last_status_code ? `HTTP ${d.last_status_code}` : (d.last_error ?? '—');
  return html`<tr>
<td>${time(d.created_at)}</td>
<td><code>${d.event_id}</code></td>
<td>${badge(d.status)}${d.next_attempt_at ? html`<br><span class="muted">next ${time(d.next_attempt_at)}</span>` : ''}</td>
<td>${d.attempts}${d.attempt_log.length ? html`<details><summary>timings</summary><ol>${d.attempt_log.map((a) => html`<li>${a.status_code ? `HTTP ${a.status_code}` : (a.error ?? 'no answer')} in ${a.response_ms} ms, ${time(a.at)}</li>`)}</ol></details>` : ''}</td>
<td>${answer}</td>
<td><form method="post" action="${BASE}/webhooks/${e.id}/replay">${csrfField(session)}<input type="hidden" name="event_id" value="${d.event_id}"><button type="submit" class="secondary copy">Replay<span class="visually-hidden"> event ${d.event_id}</span></button></form></td>
</tr>`;
}
