import { html, queryString, type Html } from './html.js';
import { BASE, layout, time } from './layout.js';
import { readingSection, type ReadingJson } from './inbound-reading.js';
import type { Session } from '../../modules/account/sessions/sessions.service.js';

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

/** Headers worth showing beside the parsed fields; every header is in the "All headers" list. */
const HEADERS_OF_INTEREST = [
  'date',
  'reply-to',
  'in-reply-to',
  'references',
  'return-path',
  'auto-submitted',
  'list-unsubscribe',
  'authentication-results',
];

/** A size in bytes the way people read it: 14 B, 2.5 KB, 1.2 MB. */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function inboundListPage(
  session: Session,
  list: { data: InboundSummaryJson[]; next_cursor: string | null },
  first: boolean,
): Html {
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
  return layout(
    { title: m.subject || m.id, section: '/inbound', session },
    html`<p class="crumbs"><a href="${BASE}/inbound">Inbound</a></p>
<h1>${m.subject || '(no subject)'}</h1>
${messageFacts(m)}
${reading ? readingSection(reading) : ''}
${headersSection(m)}
${contentSection(m)}
${attachmentsSection(m)}`,
  );
}

/** A header's value by its lower-case name; the first when it is given more than once. */
const headerOf = (m: InboundJson, name: string) => m.headers.find((h) => h.name.toLowerCase() === name)?.value;

function messageFacts(m: InboundJson): Html {
  return html`<dl class="facts">
  <div><dt>From</dt><dd class="addr">${m.from || '—'}</dd></div>
  <div><dt>To</dt><dd class="addr">${m.to.join(', ') || '—'}</dd></div>
  ${m.cc.length ? html`<div><dt>Cc</dt><dd class="addr">${m.cc.join(', ')}</dd></div>` : ''}
  <div><dt>Date</dt><dd>${headerOf(m, 'date') ?? html`<span class="muted">—</span>`}</dd></div>
  <div><dt>Received</dt><dd>${time(m.created_at)}</dd></div>
  <div><dt>Envelope sender</dt><dd class="addr">${m.mail_from || '<> (none: a bounce or other automatic message)'}</dd></div>
  <div><dt>Envelope recipients</dt><dd class="addr">${m.recipients.join(', ')}</dd></div>
  ${m.message_id ? html`<div><dt>Message-ID</dt><dd><code>${m.message_id}</code></dd></div>` : ''}
  <div><dt>Size</dt><dd>${sizeText(m.size)} · <a href="${BASE}/inbound/${m.id}/raw" download>Download as it arrived (.eml)</a></dd></div>
  <div><dt>Id</dt><dd><code>${m.id}</code></dd></div>
</dl>`;
}

function headersSection(m: InboundJson): Html {
  const interesting = HEADERS_OF_INTEREST.filter((n) => n !== 'date' && headerOf(m, n)).map(
    (n) => html`<div><dt>${headerName(n)}</dt><dd>${headerOf(m, n)}</dd></div>`,
  );
  return html`${interesting.length ? html`<h2>Headers of interest</h2><dl class="details">${interesting}</dl>` : ''}
<details><summary>All headers (${m.headers.length})</summary>
<div class="scroll"><table>
<thead><tr><th scope="col">Name</th><th scope="col">Value</th></tr></thead>
<tbody>${m.headers.map((h) => html`<tr><td><code>${h.name}</code></td><td class="addr">${h.value}</td></tr>`)}</tbody>
</table></div>
</details>`;
}

function contentSection(m: InboundJson): Html {
  return html`<section aria-labelledby="h-content">
<h2 id="h-content">Content</h2>
${m.html !== null ? html`<h3>HTML</h3><iframe class="preview" title="The message's HTML, with scripts and remote content blocked" sandbox src="${BASE}/inbound/${m.id}/html"></iframe>` : ''}
${m.text !== null ? html`<h3>Text</h3><pre class="text-part">${m.text}</pre>` : ''}
${m.html === null && m.text === null ? html`<p class="empty">This message has no text or HTML part.</p>` : ''}
</section>`;
}

function headerName(lower: string): string {
  return lower === 'message-id'
    ? 'Message-ID'
    : lower.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
}

function attachmentsSection(m: InboundJson): Html {
  return html`<section aria-labelledby="h-files">
<h2 id="h-files">Attachments</h2>
${
  m.attachments.length
    ? html`<div class="scroll"><table>
<thead><tr><th scope="col">File</th><th scope="col">Type</th><th scope="col">Size</th></tr></thead>
<tbody>${m.attachments.map(
        (a) =>
          html`<tr><td><a href="${BASE}/inbound/${m.id}/attachments/${a.index}" download>${a.filename}</a>${a.content_id ? html` <span class="muted">(inline)</span>` : ''}</td><td><code>${a.content_type}</code></td><td>${sizeText(a.size)}</td></tr>`,
      )}</tbody>
</table></div>`
    : html`<p class="empty">No attachments.</p>`
}
</section>`;
}
