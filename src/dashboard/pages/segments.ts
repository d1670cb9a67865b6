import { html, type Html } from './html.js';
import { BASE, csrfField, time } from './layout.js';
import { formMessage, invalid, messageFor, type FormError } from './form-errors.js';
import {
  contactsLayout,
  contactTable,
  doneNote,
  pager,
  type AudienceJson,
  type ContactJson,
  type ListJson,
  type PropertyJson,
  type SegmentJson,
} from './contact-shared.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

// Segments: the list and the filter editor with its live count, a segment's contacts, its delete (pure).

export interface SegmentFormValues {
  name: string;
  audience_id: string;
  filter: string;
}

export const SEGMENT_FIELDS = ['name', 'audience_id', 'filter'] as const;

export function segmentValues(f: URLSearchParams): SegmentFormValues {
  return {
    name: f.get('name')?.trim() ?? '',
    audience_id: f.get('audience_id') ?? '',
    filter: f.get('filter')?.trim() ?? '',
  };
}

/** What the filter matches now: a count, or the mistake in it (with its line and column). */
export type CountState = { count: number; complete: boolean } | { error: string } | null;

/** The count part: replaced as the filter is typed in (the script), or shown after the Count button. */
export function countPart(c: CountState): Html {
  if (!c) return html`<p class="muted">Type a filter to see how many contacts it matches now.</p>`;
  if ('error' in c) return html`<p class="error" role="alert">${c.error}</p>`;
  const n = c.complete ? String(c.count) : `at least ${c.count}`;
  return html`<p><strong data-count="${c.count}">${n}</strong> ${c.count === 1 ? 'contact matches' : 'contacts match'} now${c.complete ? '' : ' (of the first 50,000 read)'}.</p>`;
}

export interface SegmentListView {
  segments: ListJson<SegmentJson>;
  audiences: AudienceJson[];
  properties: PropertyJson[];
  form: SegmentFormValues;
  count: CountState;
  error?: FormError;
  done?: string;
}

export function segmentListPage(session: Session, v: SegmentListView): Html {
  const names = new Map(v.audiences.map((a) => [a.id, a.name]));
  return contactsLayout(
    session,
    'Segments',
    '/segments',
    html`<h1>Segments</h1>
${doneNote(v.done)}
${
  v.segments.data.length
    ? html`<div class="scroll"><table>
<caption class="visually-hidden">Segments of the project, newest first</caption>
<thead><tr><th scope="col">Segment</th><th scope="col">Of</th><th scope="col">Filter</th><th scope="col">Created</th></tr></thead>
<tbody>${v.segments.data.map((s) => html`<tr><td><a href="${BASE}/segments/${s.id}">${s.name}</a></td><td>${s.audience_id ? (names.get(s.audience_id) ?? s.audience_id) : 'all contacts'}</td><td><code>${s.filter}</code></td><td>${time(s.created_at)}</td></tr>`)}</tbody>
</table></div>`
    : html`<p class="empty">No segments yet: a segment is a filter over contacts (plan == 'pro'), whose members are found again each time it is used.</p>`
}
${pager('/segments', v.segments.next_cursor, {}, 'segments')}
<section class="card" aria-labelledby="h-add">
<h2 id="h-add">Make a segment</h2>
${segmentForm(session, v)}
</section>`,
  );
}

function segmentForm(session: Session, v: SegmentListView): Html {
  const { form: f, error: e } = v;
  const p = 'seg-';
  return html`<form method="post" action="${BASE}/segments" class="settings" data-preview-form="${BASE}/segments/count/part" data-preview-target="segment-count">
${csrfField(session)}
${formMessage(e)}
<label for="${p}name">Segment name</label>
<input id="${p}name" name="name" required maxlength="200" autocomplete="off" value="${f.name}"${invalid(e, p, 'name')}>
${messageFor(e, p, 'name')}
<label for="${p}audience_id">Contacts of</label>
<select id="${p}audience_id" name="audience_id"${invalid(e, p, 'audience_id')}><option value="">all the project's contacts</option>${v.audiences.map((a) => html`<option value="${a.id}"${a.id === f.audience_id ? html` selected` : ''}>the audience ${a.name}</option>`)}</select>
${messageFor(e, p, 'audience_id')}
<label for="${p}filter">Filter</label>
<textarea id="${p}filter" name="filter" required maxlength="4000" rows="3" spellcheck="false" aria-describedby="${p}filter-help segment-count${e?.field === 'filter' ? ` ${p}filter-error` : ''}"${e?.field === 'filter' ? html` aria-invalid="true"` : ''}>${f.filter}</textarea>
${messageFor(e, p, 'filter')}
<div id="${p}filter-help" class="muted">${filterHelp(v.properties)}</div>
<div id="segment-count" aria-live="polite">${countPart(v.count)}</div>
<div class="actions"><button type="submit">Save segment</button> <button type="submit" class="secondary" formaction="${BASE}/segments/count">Count matching contacts</button></div>
</form>`;
}

function filterHelp(properties: readonly PropertyJson[]): Html {
  return html`<p>A condition as in a template's <code>{{#if}}</code>: <code>==</code>, <code>!=</code>, <code>&gt;</code>, <code>&gt;=</code>, <code>&lt;</code>, <code>&lt;=</code> against 'text', a number, true, false or null; a bare name is true when it has a value, <code>!name</code> when it has none; <code>and</code>, <code>or</code>. Example: <code>plan == 'pro' and signup_date &gt;= '2026-01-01'</code>.</p>
<p>Names: <code>email</code>, <code>first_name</code>, <code>last_name</code>, <code>created_at</code>${properties.map((p) => html`, <code>${p.key}</code> (${p.type})`)}.</p>`;
}

export interface SegmentView {
  segment: SegmentJson;
  audience: AudienceJson | null;
  contacts: ListJson<ContactJson>;
}

export function segmentPage(session: Session, v: SegmentView): Html {
  const s = v.segment;
  return contactsLayout(
    session,
    s.name,
    '/segments',
    html`<p class="crumbs"><a href="${BASE}/segments">Segments</a></p>
<h1>${s.name}</h1>
<dl class="facts">
  <div><dt>Id</dt><dd><code>${s.id}</code></dd></div>
  <div><dt>Contacts of</dt><dd>${v.audience ? html`<a href="${BASE}/audiences/${v.audience.id}">${v.audience.name}</a>` : 'all the project'}</dd></div>
  <div><dt>Filter</dt><dd><code>${s.filter}</code></dd></div>
  <div><dt>Created</dt><dd>${time(s.created_at)}</dd></div>
</dl>
<div class="actions"><a class="button-link danger" href="${BASE}/segments/${s.id}/delete">Delete segment…</a></div>
<h2>Who matches now</h2>
${v.contacts.data.length ? contactTable(`Contacts of ${s.name}`, v.contacts.data) : html`<p class="empty">No contact matches this filter now.</p>`}
${pager(`/segments/${s.id}`, v.contacts.next_cursor, {}, 'contacts')}`,
  );
}

export function deleteSegmentPage(session: Session, s: SegmentJson): Html {
  return contactsLayout(
    session,
    `Delete ${s.name}`,
    '/segments',
    html`<p class="crumbs"><a href="${BASE}/segments">Segments</a> › <a href="${BASE}/segments/${s.id}">${s.name}</a></p>
<h1>Delete this segment?</h1>
<p><strong>${s.name}</strong>: <code>${s.filter}</code></p>
<p>Only the filter goes: no contact is changed. A segment a broadcast sends to cannot be deleted until that broadcast is cancelled or changed.</p>
<form method="post" action="${BASE}/segments/${s.id}/delete">${csrfField(session)}<button type="submit" class="danger">Delete segment</button> <a href="${BASE}/segments/${s.id}">Keep it</a></form>`,
  );
}
