import { html, type Html } from './html.js';
import { BASE, csrfField, time } from './layout.js';
import { formMessage, invalid, messageFor, type FormError } from './form-errors.js';
import { contactsLayout, type AudienceJson, type PropertyJson } from './contact-shared.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

// The CSV import of contacts: its form, and its progress page with the part that refreshes until the
// import is over (pure).

/** An import as the progress page shows it (kept in memory by the dashboard that runs it). */
export interface ImportState {
  id: string;
  fileName: string;
  audience: { id: string; name: string } | null;
  startedAt: string;
  finishedAt: string | null;
  /** the good rows stored so far, and how many there are */
  stored: number;
  toStore: number;
  rows: number;
  created: number;
  updated: number;
  addedToAudience: number;
  refused: ReadonlyArray<{ line: number; reason: string }>;
  /** why it stopped before the end (a database error) */
  error: string | null;
}

/** Refused rows listed on the page; past these the page says how many more (the CLI lists them all). */
const REFUSED_SHOWN = 100;

export interface ImportFormView {
  audiences: AudienceJson[];
  properties: PropertyJson[];
  audienceId: string;
  recent: ImportState[];
  error?: FormError;
}

export function importFormPage(session: Session, v: ImportFormView): Html {
  const e = v.error;
  const p = 'imp-';
  return contactsLayout(
    session,
    'Import contacts',
    '/contacts/import',
    html`<p class="crumbs"><a href="${BASE}/contacts">Contacts</a></p>
<h1>Import contacts from CSV</h1>
<p>The first row names the columns: <code>email</code> (required), <code>first_name</code>, <code>last_name</code>, <code>unsubscribed</code> (true or false)${v.properties.map((x) => html`, <code>${x.key}</code>`)}. Each row adds the contact of its address, or changes the contact the project has; a wrong row is refused with its line and reason, and the others are imported. The export writes the same columns.</p>
<form method="post" action="${BASE}/contacts/import" enctype="multipart/form-data" class="settings">
${csrfField(session)}
${formMessage(e)}
<label for="${p}file">CSV file</label>
<input id="${p}file" name="file" type="file" accept=".csv,text/csv" required${invalid(e, p, 'file')}>
${messageFor(e, p, 'file')}
<label for="${p}audience_id">Also add them to</label>
<select id="${p}audience_id" name="audience_id"${invalid(e, p, 'audience_id')}><option value="">(no audience)</option>${v.audiences.map((a) => html`<option value="${a.id}"${a.id === v.audienceId ? html` selected` : ''}>${a.name}</option>`)}</select>
${messageFor(e, p, 'audience_id')}
<button type="submit">Import contacts</button>
</form>
<p class="muted">Up to 16 MB a file. Rows are stored 500 at a time: an import stopped midway keeps what it stored, and importing the same file again changes nothing more.</p>
${
  v.recent.length
    ? html`<h2>Recent imports</h2><ul>${v.recent.map((i) => html`<li><a href="${BASE}/contacts/imports/${i.id}">${i.fileName}</a>, ${time(i.startedAt)}: ${i.finishedAt ? (i.error ? 'stopped' : 'done') : 'running'}</li>`)}</ul>`
    : ''
}`,
  );
}

export function importPage(session: Session, s: ImportState): Html {
  return contactsLayout(
    session,
    `Import of ${s.fileName}`,
    '/contacts/import',
    html`<p class="crumbs"><a href="${BASE}/contacts">Contacts</a> › <a href="${BASE}/contacts/import">Import</a></p>
<h1 class="addr">Import of ${s.fileName}</h1>
<p class="muted">Started ${time(s.startedAt)}${s.audience ? html`, into the audience <a href="${BASE}/audiences/${s.audience.id}">${s.audience.name}</a>` : ''}.</p>
<section aria-labelledby="h-progress" data-live-src="${BASE}/contacts/imports/${s.id}/state" aria-live="polite">
${importProgress(s)}
</section>`,
  );
}

/** The part that refreshes: counts, the progress bar, the refused rows; final once the import is over. */
export function importProgress(s: ImportState): Html {
  const over = s.finishedAt !== null;
  const state = s.error ? `Stopped: ${s.error}` : over ? 'Done.' : 'Importing…';
  return html`<div${over ? html` data-final="true"` : ''}>
<h2 id="h-progress">Progress</h2>
<p class="${s.error ? 'error' : ''}" id="import-state"><strong>${state}</strong></p>
<label for="import-meter">Rows stored</label>
<progress id="import-meter" max="${Math.max(s.toStore, 1)}" value="${over && !s.error ? Math.max(s.toStore, 1) : s.stored}">${s.stored} of ${s.toStore}</progress> <span>${s.stored} of ${s.toStore}</span>
<dl class="facts import-counts">
  <div><dt>Rows read</dt><dd data-count="rows">${s.rows}</dd></div>
  <div><dt>Created</dt><dd data-count="created">${s.created}</dd></div>
  <div><dt>Updated</dt><dd data-count="updated">${s.updated}</dd></div>
  <div><dt>Refused</dt><dd data-count="refused">${s.refused.length}</dd></div>
  ${s.audience ? html`<div><dt>Added to ${s.audience.name}</dt><dd>${s.addedToAudience}</dd></div>` : ''}
</dl>
${s.refused.length ? refusedRows(s.refused) : ''}
${over ? html`<p><a href="${BASE}/contacts">See the contacts</a></p>` : ''}
</div>`;
}

function refusedRows(refused: ImportState['refused']): Html {
  const more = refused.length - REFUSED_SHOWN;
  return html`<h3>Refused rows</h3>
<div class="scroll"><table class="refused">
<caption class="visually-hidden">Rows of the file that were not imported, with why</caption>
<thead><tr><th scope="col">Line</th><th scope="col">Reason</th></tr></thead>
<tbody>${refused.slice(0, REFUSED_SHOWN).map((r) => html`<tr><td>${r.line}</td><td>${r.reason}</td></tr>`)}</tbody>
</table></div>
${more > 0 ? html`<p class="muted">And ${more} more: fix the rows above and import the file again (rows already imported change nothing).</p>` : ''}`;
}
