import { html, queryString, type Html } from './html.js';
import { BASE, layout, time } from './layout.js';
import { EMAIL_STATUSES, RECIPIENT_STATUSES } from '../../modules/sending/emails/email.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';
import type { DeliveryState } from '../../modules/deliverability/shaping/mta-status.service.js';
import { deliveryBanner } from './delivery-banner.js';

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
  recipients: Array<{
    address: string;
    kind: string;
    status: string;
    bounce?: { bounce_type: string; reason: string | null; status: string | null; diagnostic: string | null } | null;
  }>;
  created_at: string;
  updated_at: string;
}

export interface EventJson {
  id: string;
  type: string;
  recipient: string | null;
  /** each detail is a JSON value */
  data: { details?: Record<string, string | number | boolean | null | object> };
  created_at: string;
  webhook_deliveries: Array<{
    id: string;
    endpoint_id: string;
    status: string;
    attempts: number;
    last_status_code: number | null;
    last_error: string | null;
  }>;
}

export interface EmailFilter {
  status?: string;
  /** emails with a recipient in this state */
  outcome?: string;
  to?: string;
  /** name:value */
  tag?: string;
  /** first and last day shown, YYYY-MM-DD (UTC) */
  from?: string;
  until?: string;
}

export function emailListPage(
  session: Session,
  page: { data: EmailJson[]; next_cursor: string | null },
  filter: EmailFilter,
  delivery: DeliveryState = { suspended: [], waiting: [], sources: [] },
): Html {
  return layout(
    { title: 'Emails', section: '/emails', session },
    html`<h1>Emails</h1>
${deliveryBanner(delivery)}
${filterForm(filter)}
${
  page.data.length
    ? emailTable(page.data, 'Emails, newest first')
    : html`<p class="empty">No emails${Object.values(filter).some(Boolean) ? ' match these filters' : ' yet'}.</p>`
}
${page.next_cursor ? html`<p class="pager"><a href="${BASE}/emails${queryString({ ...filter, cursor: page.next_cursor })}" rel="next">Older emails →</a></p>` : ''}`,
  );
}

/** Emails as the list shows them: created, subject (the link to the email), to, outcome, recipient counts. */
export function emailTable(emails: EmailJson[], caption: string): Html {
  return html`<div class="scroll"><table>
<caption class="visually-hidden">${caption}</caption>
<thead><tr><th scope="col">Created</th><th scope="col">Subject</th><th scope="col">To</th><th scope="col">Status</th><th scope="col">Recipients</th></tr></thead>
<tbody>${emails.map(
    (e) => html`<tr>
  <td>${time(e.created_at)}</td>
  <td><a href="${BASE}/emails/${e.id}">${e.subject || '(no subject)'}</a></td>
  <td class="addr">${e.to.join(', ')}</td>
  <td>${outcomeBadge(e)}</td>
  <td>${recipientCounts(e)}</td>
</tr>`,
  )}</tbody>
</table></div>`;
}

function filterForm(filter: EmailFilter): Html {
  return html`<form class="filters" method="get" action="${BASE}/emails" role="search" aria-label="Filter emails">
  <div><label for="f-status">Status</label>
  <select id="f-status" name="status"><option value="">any</option>${EMAIL_STATUSES.map((s) => html`<option value="${s}"${s === filter.status ? html` selected` : ''}>${s}</option>`)}</select></div>
  <div><label for="f-outcome">Outcome</label>
  <select id="f-outcome" name="outcome"><option value="">any</option>${RECIPIENT_STATUSES.map((s) => html`<option value="${s}"${s === filter.outcome ? html` selected` : ''}>${s}</option>`)}</select></div>
  <div><label for="f-to">Recipient</label>
  <input id="f-to" name="to" type="search" value="${filter.to ?? ''}" placeholder="someone@example.com"></div>
  <div><label for="f-tag">Tag</label>
  <input id="f-tag" name="tag" type="search" value="${filter.tag ?? ''}" placeholder="kind:receipt"></div>
  <div><label for="f-from">From day (UTC)</label>
  <input id="f-from" name="from" type="date" value="${filter.from ?? ''}"></div>
  <div><label for="f-until">Until day (UTC)</label>
  <input id="f-until" name="until" type="date" value="${filter.until ?? ''}"></div>
  <div><button type="submit">Filter</button></div>
</form>`;
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

/** How many of the email's recipients are in each state, worst first: "2 delivered, 1 bounced" reads as 1 bounced, 2 delivered. */
export function recipientCounts(e: Pick<EmailJson, 'recipients'>): Html {
  const counts = new Map<string, number>();
  for (const r of e.recipients) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  const order = (s: string) => {
    const i = (TROUBLE as readonly string[]).indexOf(s);
    return i === -1 ? TROUBLE.length + (s === 'delivered' ? 1 : 0) : i;
  };
  return html`<ul class="counts">${[...counts]
    .sort(([a], [b]) => order(a) - order(b))
    .map(([s, n]) => html`<li><span class="s-${s}">${n} ${s}</span></li>`)}</ul>`;
}

export function outcomeBadge(e: EmailJson): Html {
  const outcome = listOutcome(e);
  const count = e.recipients.filter((r) => r.status === outcome).length;
  const title =
    outcome === e.status
      ? `email ${e.status}`
      : `email ${e.status}; ${count} of ${e.recipients.length} recipient${e.recipients.length === 1 ? '' : 's'} ${outcome}`;
  // accepted with nothing known yet of a recipient says nothing good or bad: no colour
  const tone = outcome === 'accepted' ? '' : ` s-${outcome}`;
  return html`<span class="badge${tone}" title="${title}">${outcome}</span>`;
}
