import { html, queryString, type Html } from './html.js';
import { BASE, csrfField, layout, time } from './layout.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';
import type { SuppressionReason } from '../../modules/sending/suppressions/suppression.js';

// The API's JSON shape (GET /v1/suppressions), as the page reads it.
export interface SuppressionJson {
  email: string;
  reason: string;
  /** the bounce that suppressed it: its reason (docs/bounces.md), shown beside `bounce`, its words on hover */
  bounce?: { reason: string; status: string | null; diagnostic: string | null } | null;
  created_at: string;
  /** null: for ever */
  expires_at: string | null;
}

export const SUPPRESSION_REASONS: readonly SuppressionReason[] = ['bounce', 'complaint', 'manual'];

export interface SuppressionFilter {
  reason?: string;
  email?: string;
}

/** What the last form did, said at the top of the page it led to. */
export interface SuppressionNotice {
  added?: string;
  /** already on the list: it keeps its first reason and date */
  kept?: string;
  removed?: string;
  /** the add form was refused: its message, and what was typed */
  error?: { message: string; email: string; reason: string; until?: string };
}

const REASON_CLASS: Record<string, string> = { bounce: 'bounced', complaint: 'complained', manual: 'suppressed' };

export function suppressionsPage(
  session: Session,
  list: { data: SuppressionJson[]; next_cursor: string | null },
  filter: SuppressionFilter,
  notice: SuppressionNotice = {},
): Html {
  const filtered = !!(filter.reason || filter.email);
  return layout(
    { title: 'Suppressions', section: '/suppressions', session },
    html`<h1>Suppressions</h1>
<p class="muted">Nothing is sent to an address on this list: a send to it is skipped (<code>email.suppressed</code>), or refused when every recipient is on it. Live mail adds a Permanent bounce and a complaint by itself.</p>
${noticeOf(notice)}
${addForm(session, notice.error)}
<h2>Suppressed addresses</h2>
<form class="filters" method="get" action="${BASE}/suppressions" role="search" aria-label="Filter suppressions">
  <div><label for="f-reason">Reason</label>
  <select id="f-reason" name="reason"><option value="">any</option>${SUPPRESSION_REASONS.map((r) => html`<option value="${r}"${r === filter.reason ? html` selected` : ''}>${r}</option>`)}</select></div>
  <div><label for="f-email">Address contains</label>
  <input id="f-email" name="email" type="search" value="${filter.email ?? ''}" placeholder="example.com"></div>
  <div><button type="submit">Filter</button></div>
</form>
${
  list.data.length
    ? html`<div class="scroll"><table>
<caption class="visually-hidden">Suppressed addresses, newest first</caption>
<thead><tr><th scope="col">Address</th><th scope="col">Reason</th><th scope="col">Since</th><th scope="col">Until</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${list.data.map((s) => row(session, s))}</tbody>
</table></div>`
    : html`<p class="empty">No suppressed addresses${filtered ? ' match these filters' : ' yet'}.</p>`
}
${list.next_cursor ? html`<p class="pager"><a href="${BASE}/suppressions${queryString({ ...filter, cursor: list.next_cursor })}" rel="next">More →</a></p>` : ''}`,
  );
}

function row(session: Session, s: SuppressionJson): Html {
  return html`<tr>
  <td class="addr">${s.email}</td>
  <td><span class="badge s-${REASON_CLASS[s.reason] ?? 'suppressed'}">${s.reason}</span>${s.bounce ? html` <code title="${s.bounce.diagnostic ?? ''}">${s.bounce.reason}</code>` : ''}</td>
  <td>${time(s.created_at)}</td>
  <td>${s.expires_at ? time(s.expires_at) : html`<span class="muted">for ever</span>`}</td>
  <td><form method="post" action="${BASE}/suppressions/remove">${csrfField(session)}<input type="hidden" name="email" value="${s.email}"><button type="submit" class="secondary">Remove<span class="visually-hidden"> ${s.email}</span></button></form></td>
</tr>`;
}

function addForm(session: Session, error: SuppressionNotice['error']): Html {
  const reason = error?.reason ?? 'manual';
  return html`<section class="card" aria-labelledby="h-add">
<h2 id="h-add">Add an address</h2>
<form method="post" action="${BASE}/suppressions">
  ${csrfField(session)}
  <label for="s-email">Address to suppress</label>
  <input id="s-email" name="email" type="text" inputmode="email" autocomplete="off" spellcheck="false" required maxlength="320" value="${error?.email ?? ''}"${error ? html` aria-invalid="true" aria-describedby="s-error"` : ''}>
  ${error ? html`<p class="error" id="s-error" role="alert">${error.message}</p>` : ''}
  <label for="s-reason">Reason to record</label>
  <select id="s-reason" name="reason">${SUPPRESSION_REASONS.map((r) => html`<option value="${r}"${r === reason ? html` selected` : ''}>${r}${r === 'manual' ? '' : ' (importing a list kept elsewhere)'}</option>`)}</select>
  <label for="s-until">Until (UTC day; empty: for ever)</label>
  <input id="s-until" name="until" type="date" value="${error?.until ?? ''}">
  <button type="submit">Suppress address</button>
</form>
</section>`;
}

function noticeOf(n: SuppressionNotice): Html {
  const said = n.added
    ? html`${n.added} is suppressed: nothing more is sent to it.`
    : n.kept
      ? html`${n.kept} was already suppressed; it keeps its first reason and date.`
      : n.removed
        ? html`${n.removed} is no longer suppressed.`
        : null;
  return said ? html`<p class="note" role="status">${said}</p>` : html``;
}
