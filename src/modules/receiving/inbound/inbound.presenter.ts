import { iso } from '../../../lib/time.js';
import type { InboundEmail } from './inbound.repo.js';

/** An inbound_email in a list: who, what, which files; no bodies. */
export function presentInboundSummary(m: InboundEmail) {
  return {
    id: m.id,
    object: 'inbound_email',
    from: m.from,
    to: m.to,
    cc: m.cc,
    recipients: m.rcptTo,
    subject: m.subject,
    message_id: m.messageId,
    size: m.size,
    attachments: presentAttachments(m),
    created_at: iso(m.createdAt),
  };
}

/** GET /v1/inbound/{id} (CONTRACT §5): the summary with text, html and headers. */
export function presentInbound(m: InboundEmail) {
  return {
    ...presentInboundSummary(m),
    mail_from: m.mailFrom,
    text: m.text,
    html: m.html,
    headers: m.headers.map(([name, value]) => ({ name, value })),
  };
}

function presentAttachments(m: InboundEmail) {
  return m.attachments.map((a, i) => ({
    index: i,
    filename: a.filename,
    content_type: a.contentType,
    size: a.size,
    content_id: a.contentId,
    url: `/v1/inbound/${m.id}/attachments/${i}`,
  }));
}
