import { html, queryString, type Html } from './html.js';
import { BASE, layout, time } from './layout.js';
import type { Session } from '../../modules/sessions/sessions.service.js';

// The API's JSON shapes (GET /v1/inbound, GET /v1/inbound/{id}), as the pages read them.
export interface InboundAttachmentJson {
  index: number;
  filename: string;
  content_type: string;
  size: number;
  content_id: string | null;
}

export interface InboundSummaryJson {
  id: string;
  from: string;
  to: string[];
  cc: string[];
  recipients: string[];
  subject: string;
  message_id: string | null;
  size: number;
  attachments: InboundAttachmentJson[];
  created_at: string;
}

export interface InboundJson extends InboundSummaryJson {
  mail_from: string;
  text: string | null;
  html: string | null;
  headers: Array<{ name: string; value: string }>;
}

/** What the bounce reader makes of a message (`posthorn inbound parse --json`), and the email it is about when this project has it. */
export interface ReadingJson {
  kind: 'bounce' | 'complaint' | 'auto_reply' | 'other';
  original_message_id: string | null;
  feedback_type?: string | null;
  user_agent?: string | null;
  reporting_mta: string | null;
  recipients: Array<{ address: string; action: string | null; status: string | null; bounce_type: string | null; reason: string | null; diagnostic: string | null }>;
  /** the email the report is about, when its Message-ID names one of this project's */
  email_id: string | null;
}

/** Headers worth showing beside the parsed fields; every header is in the "All headers" list. */
const HEADERS_OF_INTEREST = ['date', 'reply-to', 'in-reply-to', 'references', 'return-path', 'auto-submitted', 'list-unsubscribe', 'authentication-results'];

const KIND_LABEL: Record<ReadingJson['kind'], string> = { bounce: 'Bounce', complaint: 'Complaint', auto_reply: 'Auto-reply', other: 'Other mail' };
const KIND_CLASS: Record<ReadingJson['kind'], string> = { bounce: 's-bounced', complaint: 's-complained', auto_reply: 's-deferred', other: '' };

/** A size in bytes the way people read it: 14 B, 2.5 KB, 1.2 MB. */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function inboundListPage(session: Session, list: { data: InboundSummaryJson[]; next_cursor: string | null }, first: boolean): Html {
  const rows = list.data.map(
    (m) => html`<tr>
  <td>${time(m.created_at)}</td>
  <td class="addr">${m.from || html`<span class="muted">(no sender)</span>`}</td>
  <td><a href="${BASE}/inbound/${m.id}">${m.subject || '(no subject)'}</a></td>
  <td class="addr">${m.recipients.join(', ')}</td>
  <td>${m.attachments.length ? `${m.attachments.length} (${sizeText(m.attachments.reduce((n, a) => n + a.size, 0))})` : html`<span class="muted">none</span>`}</td>
</tr>`,
  );
  return layout(
    { title: 'Inbound', section: '/inbound', session },
    html`<h1>Inbound</h1>
<p class="muted">Mail received at the addresses of this project's verified domains, newest first. Bounces and complaints sent to the return path change the state of their email instead (see the email's timeline).</p>
${
  list.data.length
    ? html`<div class="scroll"><table>
<caption class="visually-hidden">Received mail, newest first</caption>
<thead><tr><th scope="col">Received</th><th scope="col">From</th><th scope="col">Subject</th><th scope="col">To</th><th scope="col">Attachments</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`
    : html`<p class="empty">${first ? 'No mail received yet.' : 'No older mail.'}</p>`
}
${list.next_cursor ? html`<p class="pager"><a href="${BASE}/inbound${queryString({ cursor: list.next_cursor })}" rel="next">Older mail →</a></p>` : ''}`,
  );
}

export function inboundPage(session: Session, m: InboundJson, reading: ReadingJson | null): Html {
  const header = (name: string) => m.headers.find((h) => h.name.toLowerCase() === name)?.value;
  const interesting = HEADERS_OF_INTEREST.filter((n) => n !== 'date' && header(n)).map((n) => html`<div><dt>${headerName(n)}</dt><dd>${header(n)}</dd></div>`);
  return layout(
    { title: m.subject || m.id, section: '/inbound', session },
    html`<p class="crumbs"><a href="${BASE}/inbound">Inbound</a></p>
<h1>${m.subject || '(no subject)'}</h1>
<dl class="facts">
  <div><dt>From</dt><dd class="addr">${m.from || '—'}</dd></div>
  <div><dt>To</dt><dd class="addr">${m.to.join(', ') || '—'}</dd></div>
  ${m.cc.length ? html`<div><dt>Cc</dt><dd class="addr">${m.cc.join(', ')}</dd></div>` : ''}
  <div><dt>Date</dt><dd>${header('date') ?? html`<span class="muted">—</span>`}</dd></div>
  <div><dt>Received</dt><dd>${time(m.created_at)}</dd></div>
  <div><dt>Envelope sender</dt><dd class="addr">${m.mail_from || '<> (none: a bounce or other automatic message)'}</dd></div>
  <div><dt>Envelope recipients</dt><dd class="addr">${m.recipients.join(', ')}</dd></div>
  ${m.message_id ? html`<div><dt>Message-ID</dt><dd><code>${m.message_id}</code></dd></div>` : ''}
  <div><dt>Size</dt><dd>${sizeText(m.size)} · <a href="${BASE}/inbound/${m.id}/raw" download>Download as it arrived (.eml)</a></dd></div>
  <div><dt>Id</dt><dd><code>${m.id}</code></dd></div>
</dl>
${reading ? readingSection(reading) : ''}
${interesting.length ? html`<h2>Headers of interest</h2><dl class="details">${interesting}</dl>` : ''}
<details><summary>All headers (${m.headers.length})</summary>
<div class="scroll"><table>
<thead><tr><th scope="col">Name</th><th scope="col">Value</th></tr></thead>
<tbody>${m.headers.map((h) => html`<tr><td><code>${h.name}</code></td><td class="addr">${h.value}</td></tr>`)}</tbody>
</table></div>
</details>
<section aria-labelledby="h-content">
<h2 id="h-content">Content</h2>
${m.html !== null ? html`<h3>HTML</h3><iframe class="preview" title="The message's HTML, with scripts and remote content blocked" sandbox src="${BASE}/inbound/${m.id}/html"></iframe>` : ''}
${m.text !== null ? html`<h3>Text</h3><pre class="text-part">${m.text}</pre>` : ''}
${m.html === null && m.text === null ? html`<p class="empty">This message has no text or HTML part.</p>` : ''}
</section>
${attachmentsSection(m)}`,
  );
}

function headerName(lower: string): string {
  return lower === 'message-id' ? 'Message-ID' : lower.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
}

function attachmentsSection(m: InboundJson): Html {
  return html`<section aria-labelledby="h-files">
<h2 id="h-files">Attachments</h2>
${
  m.attachments.length
    ? html`<div class="scroll"><table>
<thead><tr><th scope="col">File</th><th scope="col">Type</th><th scope="col">Size</th></tr></thead>
<tbody>${m.attachments.map(
        (a) => html`<tr><td><a href="${BASE}/inbound/${m.id}/attachments/${a.index}" download>${a.filename}</a>${a.content_id ? html` <span class="muted">(inline)</span>` : ''}</td><td><code>${a.content_type}</code></td><td>${sizeText(a.size)}</td></tr>`,
      )}</tbody>
</table></div>`
    : html`<p class="empty">No attachments.</p>`
}
</section>`;
}

/** A bounce, complaint or auto-reply as the classifier reads it. */
function readingSection(r: ReadingJson): Html {
  if (r.kind === 'other') return html``;
  return html`<section aria-labelledby="h-reading" class="card">
<h2 id="h-reading">Read as <span class="badge ${KIND_CLASS[r.kind]}">${KIND_LABEL[r.kind]}</span></h2>
<p class="muted">What the appliance's bounce reader makes of this message (as <code>posthorn inbound parse</code> shows it). It came to a receiving address, so it is kept as received mail and changed no email by itself.</p>
<dl class="facts">
  <div><dt>About the email</dt><dd>${r.email_id ? html`<a href="${BASE}/emails/${r.email_id}">${r.email_id}</a>` : r.original_message_id ? html`<code>${r.original_message_id}</code> <span class="muted">(not an email of this project)</span>` : html`<span class="muted">not named in the message</span>`}</dd></div>
  ${r.reporting_mta ? html`<div><dt>Reporting server</dt><dd>${r.reporting_mta}</dd></div>` : ''}
  ${r.kind === 'complaint' ? html`<div><dt>Feedback type</dt><dd>${r.feedback_type ?? '—'}</dd></div><div><dt>Reported by</dt><dd>${r.user_agent ?? '—'}</dd></div>` : ''}
</dl>
${r.recipients.length ? readingRecipients(r) : ''}
</section>`;
}

function readingRecipients(r: ReadingJson): Html {
  const bounce = r.kind === 'bounce';
  return html`<h3>Recipients</h3>
<div class="scroll"><table>
<thead><tr><th scope="col">Address</th>${bounce ? html`<th scope="col">Action</th><th scope="col">Status</th><th scope="col">Bounce type</th><th scope="col">Reason</th><th scope="col">Server's words</th>` : ''}</tr></thead>
<tbody>${r.recipients.map(
    (x) => html`<tr><td class="addr">${x.address}</td>${
      bounce
        ? html`<td>${x.action ?? '—'}</td><td>${x.status ?? '—'}</td><td class="bounce-type">${x.bounce_type ?? '—'}</td><td class="reason">${x.reason ? html`<code>${x.reason}</code>` : '—'}</td><td>${x.diagnostic ?? ''}</td>`
        : ''
    }</tr>`,
  )}</tbody>
</table></div>`;
}
