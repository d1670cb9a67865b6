import { html, queryString, type Html } from './html.js';
import { BASE, badge, csrfField, time } from './layout.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

// An endpoint's delivery log (GET /v1/webhooks/{id}/deliveries), with a replay button per event (pure).

export interface AttemptJson {
  attempt: number;
  status_code: number | null;
  response_ms: number;
  error: string | null;
  response_body: string | null;
  at: string;
}

export interface DeliveryJson {
  id: string;
  event_id: string;
  event_type: string | null;
  email_id: string | null;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  attempt_log: AttemptJson[];
}

export function deliveryLog(
  session: Session,
  endpointId: string,
  log: { data: DeliveryJson[]; next_cursor: string | null },
): Html {
  return html`<section aria-labelledby="h-log"><h2 id="h-log">Delivery log</h2>
${
  log.data.length
    ? html`<div class="scroll"><table class="deliveries">
<caption class="visually-hidden">Deliveries to this endpoint, newest first</caption>
<thead><tr><th scope="col">Created</th><th scope="col">Event</th><th scope="col">Email</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col">Response body</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${log.data.map((d) => deliveryRow(session, endpointId, d))}</tbody>
</table></div>`
    : html`<p class="empty">No deliveries yet. Send a test event to see one.</p>`
}
${log.next_cursor ? html`<p class="pager"><a href="${BASE}/webhooks/${endpointId}${queryString({ cursor: log.next_cursor })}" rel="next">Older deliveries →</a></p>` : ''}
</section>`;
}

/** What an attempt got: the status code, or why there was none, and how long it took. */
function answerOf(a: AttemptJson): string {
  return `${a.status_code ? `HTTP ${a.status_code}` : (a.error ?? 'no answer')} in ${a.response_ms} ms`;
}

function deliveryRow(session: Session, endpointId: string, d: DeliveryJson): Html {
  const last = d.attempt_log.at(-1);
  return html`<tr>
<td>${time(d.created_at)}</td>
<td>${d.event_type ? html`<span class="ev-name">${d.event_type}</span><br>` : ''}<code>${d.event_id}</code></td>
<td>${d.email_id ? html`<a href="${BASE}/emails/${d.email_id}" class="addr">${d.email_id}</a>` : html`<span class="muted">—</span>`}</td>
<td>${badge(d.status)}${d.next_attempt_at ? html`<br><span class="muted">next ${time(d.next_attempt_at)}</span>` : ''}</td>
<td>${d.attempts}${d.attempt_log.length > 1 ? html`<details><summary>each attempt</summary><ol>${d.attempt_log.map((a) => html`<li>${answerOf(a)}, ${time(a.at)}</li>`)}</ol></details>` : ''}</td>
<td>${last ? answerOf(last) : d.last_status_code ? `HTTP ${d.last_status_code}` : (d.last_error ?? '—')}</td>
<td>${last?.response_body ? html`<details><summary>${last.response_body.length > 40 ? `${last.response_body.slice(0, 40)}…` : last.response_body}</summary><pre class="answer">${last.response_body}</pre></details>` : html`<span class="muted">—</span>`}</td>
<td><form method="post" action="${BASE}/webhooks/${endpointId}/replay">${csrfField(session)}<input type="hidden" name="event_id" value="${d.event_id}"><button type="submit" class="secondary copy">Replay<span class="visually-hidden"> event ${d.event_id}</span></button></form></td>
</tr>`;
}
