import { html, type Html } from './html.js';
import { badge, csrfField, layout, time, BASE } from './layout.js';
import { invalid, messageFor, type FormError } from './form-errors.js';
import { broadcastUrl, targetName } from './broadcasts.js';
import type { BroadcastJson } from './broadcast-form.js';
import type { BroadcastChoices } from './broadcast-form.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

// A broadcast's page (pure): what it is, its counts (refreshed while it sends), and what can be
// done with it now: preview it for a contact, send a test, send or schedule it, cancel it.

/** POST /v1/broadcasts/{id}/preview as the page reads it. */
export interface PreviewJson {
  contact_id: string;
  to: string;
  subject: string;
  html: string | null;
  text: string | null;
}

export interface ContactChoice {
  id: string;
  email: string;
}

export interface BroadcastView {
  broadcast: BroadcastJson;
  choices: BroadcastChoices;
  /** contacts of its audience or segment (the first page), to preview it for */
  contacts: ContactChoice[];
  done?: Html;
  preview?: { contactId: string; result?: PreviewJson; error?: FormError };
  test?: { to: string; contactId: string; error?: FormError };
  schedule?: { at: string; error?: FormError };
}

const LIVE = new Set(['scheduled', 'sending']);

/** The counts, refreshed by the script while the broadcast is scheduled or sending (also served alone). */
export function countsPart(b: BroadcastJson): Html {
  const c = b.counts;
  const item = (label: string, n: number) => html`<div><dt>${label}</dt><dd>${n}</dd></div>`;
  return html`<div${LIVE.has(b.status) ? '' : html` data-final="true"`}>
<h2 id="h-counts">Counts ${badge(b.status)}</h2>
<dl class="facts counts">
${item('Recipients', c.recipients)}${item('Sent', c.sent)}${item('Delivered', c.delivered)}${item('Bounced', c.bounced)}${item('Complained', c.complained)}${item('Opened', c.opened)}${item('Clicked', c.clicked)}${item('Unsubscribed', c.unsubscribed)}${item('Suppressed', c.suppressed)}${item('Skipped', c.skipped)}${item('Failed', c.failed)}${c.withdrawn ? item('Withdrawn', c.withdrawn) : ''}
</dl>
${b.last_error ? html`<p class="error">Last error: ${b.last_error}</p>` : ''}
</div>`;
}

function facts(b: BroadcastJson, c: BroadcastChoices): Html {
  const topic = b.topic_id ? (c.topics.find((t) => t.id === b.topic_id)?.name ?? b.topic_id) : null;
  const content = b.template_id
    ? html`template <a href="${BASE}/templates/${encodeURIComponent(b.template_id)}">${b.template_id}</a>, ${b.template_version === null ? 'its latest version' : `version ${b.template_version}`}`
    : html`${b.subject ?? ''}`;
  return html`<dl class="facts">
  <div><dt>Id</dt><dd><code>${b.id}</code></dd></div>
  <div><dt>From</dt><dd class="addr">${b.from}</dd></div>
  ${b.reply_to?.length ? html`<div><dt>Reply-To</dt><dd class="addr">${b.reply_to.join(', ')}</dd></div>` : ''}
  <div><dt>${b.template_id ? 'Content' : 'Subject'}</dt><dd>${content}</dd></div>
  <div><dt>Sent to</dt><dd>${targetName(b, c)}${topic ? html`, topic ${topic}` : ''}</dd></div>
  <div><dt>Created</dt><dd>${time(b.created_at)}</dd></div>
  ${b.scheduled_at ? html`<div><dt>Scheduled for</dt><dd>${time(b.scheduled_at)}</dd></div>` : ''}
  ${b.started_at ? html`<div><dt>Started</dt><dd>${time(b.started_at)}</dd></div>` : ''}
  ${b.finished_at ? html`<div><dt>Finished</dt><dd>${time(b.finished_at)}</dd></div>` : ''}
  ${b.environment ? html`<div><dt>Key</dt><dd>${b.environment === 'test' ? 'test (simulated)' : 'live'}</dd></div>` : ''}
</dl>`;
}

function contactOptions(contacts: ContactChoice[], current: string, none?: string): Html {
  return html`${none !== undefined ? html`<option value="">${none}</option>` : ''}${contacts.map((c) => html`<option value="${c.id}"${c.id === current ? html` selected` : ''}>${c.email}</option>`)}`;
}

/** What the preview rendered for the contact, or why it could not (also served alone, as the select changes). */
export function previewPart(b: BroadcastJson, p: BroadcastView['preview']): Html {
  if (p?.error) return html`<p class="error" role="alert" id="p-contact_id-error">${p.error.message}</p>`;
  const r = p?.result;
  if (!r) return html``;
  return html`<h3>Subject</h3><p class="rendered-subject">${r.subject}</p>
<p class="muted">As <span class="addr">${r.to}</span> would get it.</p>
${r.html === null ? '' : html`<h3>HTML</h3><iframe class="preview" title="The HTML for ${r.to}, with scripts and remote content blocked" sandbox src="${broadcastUrl(b.id, `/preview/html?contact_id=${encodeURIComponent(r.contact_id)}`)}"></iframe>`}
${r.text !== null ? html`<h3>Text</h3><pre class="text-part">${r.text}</pre>` : ''}`;
}

function previewSection(session: Session, v: BroadcastView): Html {
  const b = v.broadcast;
  const e = v.preview?.error;
  return html`<section class="card" aria-labelledby="h-preview"><h2 id="h-preview">Preview for a contact</h2>
${
  v.contacts.length
    ? html`<form method="post" action="${broadcastUrl(b.id, '/preview#h-preview')}" class="filters" data-preview-form="${broadcastUrl(b.id, '/preview/part')}" data-preview-target="broadcast-preview">
${csrfField(session)}
<div><label for="p-contact_id">Contact to preview</label>
<select id="p-contact_id" name="contact_id"${e ? html` aria-invalid="true" aria-describedby="p-contact_id-error"` : ''}>${contactOptions(v.contacts, v.preview?.contactId ?? '')}</select></div>
<button type="submit" class="secondary">Preview</button>
</form>`
    : html`<p class="empty">Its audience or segment has no contacts to preview it for.</p>`
}
<div id="broadcast-preview" aria-live="polite">${previewPart(b, v.preview)}</div>
</section>`;
}

function testSection(session: Session, v: BroadcastView): Html {
  const b = v.broadcast;
  const t = v.test;
  return html`<section class="card" aria-labelledby="h-test"><h2 id="h-test">Send a test</h2>
<form method="post" action="${broadcastUrl(b.id, '/test')}" class="settings">
${csrfField(session)}
<label for="t-to">Test address</label>
<input id="t-to" name="to" type="text" required maxlength="998" autocomplete="email" spellcheck="false" value="${t?.to ?? ''}"${invalid(t?.error, 't-', 'to')}>
${messageFor(t?.error, 't-', 'to')}
<label for="t-contact_id">Render the test as</label>
<select id="t-contact_id" name="contact_id"${invalid(t?.error, 't-', 'contact_id')}>${contactOptions(v.contacts, t?.contactId ?? '', 'No contact: only the address, no names')}</select>
${messageFor(t?.error, 't-', 'contact_id')}
${t?.error && t.error.field === null ? html`<p class="error" role="alert">${t.error.message}</p>` : ''}
<p class="muted">One email of this broadcast, sent as any email is (a test key simulates it), tagged <code>broadcast_test</code>; it is in Emails and not in the broadcast's counts.</p>
<button type="submit" class="secondary">Send test email</button>
</form></section>`;
}

function sendSection(session: Session, v: BroadcastView): Html {
  const b = v.broadcast;
  const s = v.schedule;
  return html`<section class="card" aria-labelledby="h-send"><h2 id="h-send">Send</h2>
<p>Sends one email to each contact of ${targetName(b, v.choices)} that has not left broadcast mail${b.topic_id ? ' or the topic' : ''}.</p>
<div class="actions">
<form method="post" action="${broadcastUrl(b.id, '/send')}">${csrfField(session)}<button type="submit">Send now</button></form>
</div>
<form method="post" action="${broadcastUrl(b.id, '/send')}" class="filters">
${csrfField(session)}
<div><label for="s-at">Send at (UTC)</label>
<input id="s-at" name="scheduled_at" type="datetime-local" required value="${s?.at ?? ''}"${invalid(s?.error, 's-', 'scheduled_at')}></div>
<button type="submit" class="secondary">Schedule</button>
</form>
${s?.error ? html`<p class="error" role="alert" id="s-scheduled_at-error">${s.error.message}</p>` : ''}
</section>`;
}

function actions(session: Session, b: BroadcastJson): Html {
  const draft = b.status === 'draft';
  return html`<div class="actions">
${draft ? html`<a class="button-link" href="${broadcastUrl(b.id, '/edit')}">Edit draft</a>` : ''}
${b.status !== 'draft' ? html`<a class="button-link" href="${broadcastUrl(b.id, '/report')}">Report</a>` : ''}
${LIVE.has(b.status) ? html`<form method="post" action="${broadcastUrl(b.id, '/cancel')}">${csrfField(session)}<button type="submit" class="danger">Cancel broadcast</button></form>` : ''}
${draft ? html`<a class="button-link danger" href="${broadcastUrl(b.id, '/delete')}">Delete draft…</a>` : ''}
</div>`;
}

export function broadcastPage(session: Session, v: BroadcastView): Html {
  const b = v.broadcast;
  return layout(
    { title: b.name, section: '/broadcasts', session },
    html`<p class="crumbs"><a href="${BASE}/broadcasts">Broadcasts</a></p>
<h1>${b.name}</h1>
${v.done ? html`<p class="note" role="status">${v.done}</p>` : ''}
${facts(b, v.choices)}
${actions(session, b)}
<section aria-labelledby="h-counts" data-live-src="${broadcastUrl(b.id, '/state')}" aria-live="polite">${countsPart(b)}</section>
${b.status === 'draft' ? sendSection(session, v) : ''}
${previewSection(session, v)}
${testSection(session, v)}`,
  );
}
