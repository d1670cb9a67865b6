import type { Db } from '../../../store/db.js';
import type { ReceivedAttachment, ReceivedMessage } from './received.js';
import { idPage, type Page } from '../../../lib/page.js';

/** A received message as stored: what mailparser read of it, and the envelope (the raw bytes apart: rawOf). */
export interface InboundEmail extends ReceivedMessage {
  id: string;
  projectId: string;
  mailFrom: string;
  rcptTo: string[];
  size: number;
  createdAt: number;
}

interface InboundRow {
  id: string;
  project_id: string;
  mail_from: string;
  rcpt_to: string;
  from_header: string;
  to_header: string;
  cc_header: string;
  subject: string;
  message_id: string | null;
  text: string | null;
  html: string | null;
  headers: string;
  attachments: string;
  size: number;
  created_at: number;
}

const LIST_COLUMNS = [
  'id',
  'project_id',
  'mail_from',
  'rcpt_to',
  'from_header',
  'to_header',
  'cc_header',
  'subject',
  'message_id',
  'attachments',
  'size',
  'created_at',
] as const;
const COLUMNS = [...LIST_COLUMNS, 'text', 'html', 'headers'] as const;

const fromRow = (r: InboundRow): InboundEmail => ({
  id: r.id,
  projectId: r.project_id,
  mailFrom: r.mail_from,
  rcptTo: JSON.parse(r.rcpt_to) as string[],
  from: r.from_header,
  to: JSON.parse(r.to_header) as string[],
  cc: JSON.parse(r.cc_header) as string[],
  subject: r.subject,
  messageId: r.message_id,
  text: r.text ?? null,
  html: r.html ?? null,
  headers: r.headers ? (JSON.parse(r.headers) as Array<[string, string]>) : [],
  attachments: JSON.parse(r.attachments) as ReceivedAttachment[],
  size: Number(r.size),
  createdAt: Number(r.created_at),
});

export async function insertInbound(db: Db, m: InboundEmail, raw: Buffer): Promise<void> {
  await db('inbound_emails').insert({
    id: m.id,
    project_id: m.projectId,
    mail_from: m.mailFrom,
    rcpt_to: JSON.stringify(m.rcptTo),
    from_header: m.from,
    to_header: JSON.stringify(m.to),
    cc_header: JSON.stringify(m.cc),
    subject: m.subject,
    message_id: m.messageId,
    text: m.text,
    html: m.html,
    headers: JSON.stringify(m.headers),
    attachments: JSON.stringify(m.attachments),
    size: m.size,
    raw,
    created_at: m.createdAt,
  });
}

/** Newest first; `before` is the previous page's last id. */
export async function listInbound(
  db: Db,
  projectId: string,
  limit: number,
  before: string | undefined,
): Promise<Page<InboundEmail>> {
  const q = db('inbound_emails').select(LIST_COLUMNS).where('project_id', projectId);
  if (before) q.andWhere('id', '<', before);
  const rows = (await q.orderBy('id', 'desc').limit(limit + 1)) as InboundRow[];
  const { items, nextCursor } = idPage(rows, limit);
  return { items: items.map((r) => fromRow({ ...r, text: null, html: null, headers: '' })), nextCursor };
}

export async function findInbound(db: Db, projectId: string, id: string): Promise<InboundEmail | null> {
  const row = (await db('inbound_emails').select(COLUMNS).where({ project_id: projectId, id }).first()) as
    InboundRow | undefined;
  return row ? fromRow(row) : null;
}

export async function rawOf(db: Db, projectId: string, id: string): Promise<Buffer | null> {
  const row = (await db('inbound_emails').select('raw').where({ project_id: projectId, id }).first()) as
    { raw: Buffer | Uint8Array } | undefined;
  return row ? Buffer.from(row.raw) : null;
}
