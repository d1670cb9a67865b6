import { html, type Html } from './html.js';
import { badge, BASE, csrfField, layout, time } from './layout.js';
import {
  broadcastForm,
  type BroadcastChoices,
  type BroadcastFormValues,
  type BroadcastJson,
} from './broadcast-form.js';
import type { FormError } from './form-errors.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

// The list, the compose page and the delete
// confirmation (pure). A broadcast's own page is in broadcast-detail.ts.

export const broadcastUrl = (id: string, rest = '') => `${BASE}/broadcasts/${encodeURIComponent(id)}${rest}`;

/** The name of what a broadcast is sent to, from the choices read for the page (its id when it is not among them). */
export function targetName(b: BroadcastJson, c: Pick<BroadcastChoices, 'audiences' | 'segments'>): string {
  if (b.segment_id) return `segment ${c.segments.find((s) => s.id === b.segment_id)?.name ?? b.segment_id}`;
  if (b.audience_id) return `audience ${c.audiences.find((a) => a.id === b.audience_id)?.name ?? b.audience_id}`;
  return '—';
}

export interface BroadcastListView {
  broadcasts: BroadcastJson[];
  nextCursor: string | null;
  choices: Pick<BroadcastChoices, 'audiences' | 'segments'>;
  /** a draft just deleted */
  deleted?: string;
}

export function broadcastListPage(session: Session, v: BroadcastListView): Html {
  return layout(
    { title: 'Broadcasts', section: '/broadcasts', session },
    html`<h1>Broadcasts</h1>
${v.deleted ? html`<p class="note" role="status">Draft <code>${v.deleted}</code> is deleted.</p>` : ''}
<p><a class="button-link" href="${BASE}/broadcasts/new">New broadcast</a></p>
${
  v.broadcasts.length
    ? html`<div class="scroll"><table class="broadcasts">
<caption class="visually-hidden">Broadcasts of the project, newest first</caption>
<thead><tr><th scope="col">Broadcast</th><th scope="col">Status</th><th scope="col">Sent to</th><th scope="col">Sent</th><th scope="col">Delivered</th><th scope="col">Opened</th><th scope="col">Created</th></tr></thead>
<tbody>${v.broadcasts.map(
        (b) =>
          html`<tr><td><a href="${broadcastUrl(b.id)}">${b.name}</a>${b.subject ? html`<br><span class="muted">${b.subject}</span>` : ''}</td><td>${badge(b.status)}${b.scheduled_at && b.status === 'scheduled' ? html`<br>${time(b.scheduled_at)}` : ''}</td><td>${targetName(b, v.choices)}</td><td>${b.counts.sent}</td><td>${b.counts.delivered}</td><td>${b.counts.opened}</td><td>${time(b.created_at)}</td></tr>`,
      )}</tbody>
</table></div>
${v.nextCursor ? html`<p class="pager"><a href="${BASE}/broadcasts?cursor=${v.nextCursor}">Older broadcasts</a></p>` : ''}`
    : html`<p class="empty">No broadcasts yet: a broadcast is one email to every contact of an audience or a segment. Compose one to start.</p>`
}`,
  );
}

export interface ComposeView {
  values: BroadcastFormValues;
  choices: BroadcastChoices;
  error?: FormError;
  /** set when changing a draft */
  draft?: BroadcastJson;
}

/** A new broadcast, or a draft's changes. */
export function composePage(session: Session, v: ComposeView): Html {
  const d = v.draft;
  return layout(
    { title: d ? `Edit ${d.name}` : 'New broadcast', section: '/broadcasts', session },
    html`<p class="crumbs"><a href="${BASE}/broadcasts">Broadcasts</a>${d ? html` › <a href="${broadcastUrl(d.id)}">${d.name}</a>` : ''}</p>
<h1>${d ? 'Edit draft' : 'New broadcast'}</h1>
<p class="muted">${d ? 'Changes are checked as a send would check them.' : 'This makes a draft: nothing is sent until you send or schedule it from its page, after a preview and a test if you like.'}</p>
${broadcastForm(session, {
  action: d ? broadcastUrl(d.id, '/edit') : `${BASE}/broadcasts`,
  submit: d ? 'Save draft' : 'Create draft',
  values: v.values,
  choices: v.choices,
  error: v.error,
})}`,
  );
}

/** The confirmation before a draft is deleted. */
export function deleteBroadcastPage(session: Session, b: BroadcastJson): Html {
  return layout(
    { title: `Delete ${b.name}`, section: '/broadcasts', session },
    html`<p class="crumbs"><a href="${BASE}/broadcasts">Broadcasts</a> › <a href="${broadcastUrl(b.id)}">${b.name}</a></p>
<h1>Delete this draft?</h1>
<p><strong>${b.name}</strong>${b.subject ? html`: ${b.subject}` : ''}</p>
<p>The draft is gone for good; nothing was sent from it. Test emails sent of it stay in Emails.</p>
<form method="post" action="${broadcastUrl(b.id, '/delete')}">${csrfField(session)}<button type="submit" class="danger">Delete draft</button> <a href="${broadcastUrl(b.id)}">Keep it</a></form>`,
  );
}
