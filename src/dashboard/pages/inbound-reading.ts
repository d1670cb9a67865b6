import { html, type Html } from './html.js';
import { BASE } from './layout.js';

// On a received message's page, what the bounce reader makes of it when it is a bounce, a
// complaint or an auto-reply.

/** What the bounce reader makes of a message (`posthorn inbound parse --json`), and the email it is about when this project has it. */
export interface ReadingJson {
  kind: 'bounce' | 'complaint' | 'auto_reply' | 'other';
  original_message_id: string | null;
  feedback_type?: string | null;
  user_agent?: string | null;
  reporting_mta: string | null;
  recipients: Array<{
    address: string;
    action: string | null;
    status: string | null;
    bounce_type: string | null;
    reason: string | null;
    diagnostic: string | null;
  }>;
  /** the email the report is about, when its Message-ID names one of this project's */
  email_id: string | null;
}

const KIND_LABEL: Record<ReadingJson['kind'], string> = {
  bounce: 'Bounce',
  complaint: 'Complaint',
  auto_reply: 'Auto-reply',
  other: 'Other mail',
};
const KIND_CLASS: Record<ReadingJson['kind'], string> = {
  bounce: 's-bounced',
  complaint: 's-complained',
  auto_reply: 's-deferred',
  other: '',
};

/** A bounce, complaint or auto-reply as the classifier reads it. */
export function readingSection(r: ReadingJson): Html {
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
    (x) =>
      html`<tr><td class="addr">${x.address}</td>${
        bounce
          ? html`<td>${x.action ?? '—'}</td><td>${x.status ?? '—'}</td><td class="bounce-type">${x.bounce_type ?? '—'}</td><td class="reason">${x.reason ? html`<code>${x.reason}</code>` : '—'}</td><td>${x.diagnostic ?? ''}</td>`
          : ''
      }</tr>`,
  )}</tbody>
</table></div>`;
}
