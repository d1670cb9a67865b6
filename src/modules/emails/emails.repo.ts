import { dialectOf, type Db } from '../../store/db.js';
import { prepared } from '../../store/prepared.js';
import { insertRows } from '../../store/insert-rows.js';
import type { Email, EmailStatus, Environment, Recipient, RecipientDetails, RecipientKind, RecipientStatus, StoredAttachment } from './email.js';

interface EmailRow {
  id: string;
  project_id: string;
  environment: string;
  status: string;
  status_reason: string | null;
  from_header: string;
  from_domain: string;
  to_list: string;
  cc_list: string;
  bcc_list: string;
  reply_to: string | null;
  subject: string;
  body_html?: string | null;
  body_text?: string | null;
  template_id: string | null;
  template_version: number | null;
  tags: string;
  headers: string;
  request_id: string;
  scheduled_at: number | null;
  attempts: number;
  provider_message_id: string | null;
  message_id: string;
  accepted_at: number | null;
  created_at: number;
  updated_at: number;
  broadcast_id: string | null;
  contact_id: string | null;
}

interface RecipientRow {
  id: string;
  email_id: string;
  address: string;
  kind: string;
  status: string;
  details: string | null;
  queue_row_id: string | null;
  delay_notified: number | boolean;
  updated_at: number;
}

const EMAIL_COLUMNS = [
  'id', 'project_id', 'environment', 'status', 'status_reason', 'from_header', 'from_domain', 'to_list', 'cc_list', 'bcc_list', 'reply_to',
  'subject', 'body_html', 'body_text', 'template_id', 'template_version', 'tags', 'headers', 'request_id', 'scheduled_at', 'attempts',
  'provider_message_id', 'message_id', 'accepted_at', 'created_at', 'updated_at', 'broadcast_id', 'contact_id',
] as const;

/** The list view does not need the bodies. */
const SUMMARY_COLUMNS = EMAIL_COLUMNS.filter((c) => c !== 'body_html' && c !== 'body_text');
const RECIPIENT_COLUMNS = ['id', 'email_id', 'address', 'kind', 'status', 'details', 'queue_row_id', 'delay_notified', 'updated_at'] as const;

const num = (v: number | null) => (v == null ? null : Number(v));

function emailFromRow(r: EmailRow, recipients: Recipient[]): Email {
  return {
    id: r.id,
    projectId: r.project_id,
    environment: r.environment as Environment,
    status: r.status as EmailStatus,
    statusReason: r.status_reason,
    from: r.from_header,
    fromDomain: r.from_domain,
    to: JSON.parse(r.to_list) as string[],
    cc: JSON.parse(r.cc_list) as string[],
    bcc: JSON.parse(r.bcc_list) as string[],
    replyTo: r.reply_to == null ? null : (JSON.parse(r.reply_to) as string[]),
    subject: r.subject,
    html: r.body_html ?? null,
    text: r.body_text ?? null,
    templateId: r.template_id,
    templateVersion: num(r.template_version),
    tags: JSON.parse(r.tags) as Record<string, string>,
    headers: JSON.parse(r.headers) as Record<string, string>,
    requestId: r.request_id,
    scheduledAt: num(r.scheduled_at),
    attempts: Number(r.attempts),
    providerMessageId: r.provider_message_id,
    messageId: r.message_id,
    acceptedAt: num(r.accepted_at),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    recipients,
    broadcastId: r.broadcast_id ?? null,
    contactId: r.contact_id ?? null,
  };
}

function recipientFromRow(r: RecipientRow): Recipient {
  return {
    id: r.id,
    address: r.address,
    kind: r.kind as RecipientKind,
    status: r.status as RecipientStatus,
    details: r.details ? (JSON.parse(r.details) as RecipientDetails) : null,
    queueRowId: r.queue_row_id,
    delayNotified: Boolean(r.delay_notified),
    updatedAt: Number(r.updated_at),
  };
}

function emailRow(e: Email): EmailRow {
  return {
    id: e.id,
    project_id: e.projectId,
    environment: e.environment,
    status: e.status,
    status_reason: e.statusReason,
    from_header: e.from,
    from_domain: e.fromDomain,
    to_list: JSON.stringify(e.to),
    cc_list: JSON.stringify(e.cc),
    bcc_list: JSON.stringify(e.bcc),
    reply_to: e.replyTo == null ? null : JSON.stringify(e.replyTo),
    subject: e.subject,
    body_html: e.html,
    body_text: e.text,
    template_id: e.templateId,
    template_version: e.templateVersion,
    tags: JSON.stringify(e.tags),
    headers: JSON.stringify(e.headers),
    request_id: e.requestId,
    scheduled_at: e.scheduledAt,
    attempts: e.attempts,
    provider_message_id: e.providerMessageId,
    message_id: e.messageId,
    accepted_at: e.acceptedAt,
    created_at: e.createdAt,
    updated_at: e.updatedAt,
    broadcast_id: e.broadcastId,
    contact_id: e.contactId,
  };
}

function recipientRow(emailId: string, projectId: string, r: Recipient) {
  return {
    id: r.id,
    email_id: emailId,
    project_id: projectId,
    address: r.address,
    kind: r.kind,
    status: r.status,
    details: r.details ? JSON.stringify(r.details) : null,
    queue_row_id: r.queueRowId,
    delay_notified: r.delayNotified,
    updated_at: r.updatedAt,
  };
}

export async function insertEmails(db: Db, emails: Email[], attachments: Map<string, StoredAttachment[]> = new Map()): Promise<void> {
  if (!emails.length) return;
  await insertRows(db, 'emails', emails.map(emailRow) as unknown as Array<Record<string, unknown>>);
  const recipients = emails.flatMap((e) => e.recipients.map((r) => recipientRow(e.id, e.projectId, r)));
  await insertRows(db, 'email_recipients', recipients);
  for (const [emailId, list] of attachments) {
    if (list.length) {
      await db('email_attachments').insert(
        list.map((a, position) => ({ email_id: emailId, position, filename: a.filename, content_type: a.contentType, content_id: a.contentId, content: a.content })),
      );
    }
  }
}

// One email's rows, as the inbound listener reads them for each report: prepared statements.
const summaryById = prepared<EmailRow>((db, id) => db('emails').select(SUMMARY_COLUMNS).where('id', id as string), 1);
const recipientsOfOne = prepared<RecipientRow>((db, id) => db('email_recipients').select(RECIPIENT_COLUMNS).where('email_id', id as string).orderBy('id', 'asc'), 1);

async function recipientsOf(db: Db, emailIds: string[]): Promise<Map<string, Recipient[]>> {
  const byEmail = new Map<string, Recipient[]>(emailIds.map((id) => [id, []]));
  if (!emailIds.length) return byEmail;
  const rows = emailIds.length === 1 ? await recipientsOfOne(db, emailIds[0]) : ((await db('email_recipients').select(RECIPIENT_COLUMNS).whereIn('email_id', emailIds).orderBy('id', 'asc')) as RecipientRow[]);
  for (const r of rows) byEmail.get(r.email_id)!.push(recipientFromRow(r));
  return byEmail;
}

/** An email of this project, or null: another project's id is simply not found. */
export async function findEmail(db: Db, projectId: string, id: string): Promise<Email | null> {
  const row = (await db('emails').select(EMAIL_COLUMNS).where({ id, project_id: projectId }).first()) as EmailRow | undefined;
  if (!row) return null;
  return emailFromRow(row, (await recipientsOf(db, [id])).get(id)!);
}

export async function findEmailById(db: Db, id: string): Promise<Email | null> {
  const row = (await db('emails').select(EMAIL_COLUMNS).where({ id }).first()) as EmailRow | undefined;
  if (!row) return null;
  return emailFromRow(row, (await recipientsOf(db, [id])).get(id)!);
}

/** With `withBodies: false` html and text come back null: what recording an outcome needs, read at a fraction of the cost. */
export async function findEmailsById(db: Db, ids: string[], withBodies = true): Promise<Email[]> {
  if (!ids.length) return [];
  const rows = ids.length === 1 && !withBodies ? await summaryById(db, ids[0]) : ((await db('emails').select(withBodies ? EMAIL_COLUMNS : SUMMARY_COLUMNS).whereIn('id', ids)) as EmailRow[]);
  const recipients = await recipientsOf(db, rows.map((r) => r.id));
  return rows.map((r) => emailFromRow(r, recipients.get(r.id)!));
}

/** How many attachments each of these emails has (0 for none). */
export async function attachmentCounts(db: Db, ids: string[]): Promise<Map<string, number>> {
  const counts = new Map(ids.map((id) => [id, 0]));
  if (!ids.length) return counts;
  const rows = (await db('email_attachments').select('email_id').count({ n: '*' }).whereIn('email_id', ids).groupBy('email_id')) as Array<{ email_id: string; n: number | string }>;
  for (const r of rows) counts.set(r.email_id, Number(r.n));
  return counts;
}

export async function attachmentsOf(db: Db, emailId: string): Promise<StoredAttachment[]> {
  const rows = (await db('email_attachments').select('filename', 'content_type', 'content_id', 'content').where({ email_id: emailId }).orderBy('position')) as Array<{
    filename: string;
    content_type: string;
    content_id: string | null;
    content: Buffer;
  }>;
  return rows.map((r) => ({ filename: r.filename, contentType: r.content_type, contentId: r.content_id, content: Buffer.from(r.content) }));
}

export interface ListFilter {
  limit: number;
  /** ids strictly older than this one */
  before?: string | undefined;
  status?: EmailStatus | undefined;
  /** bare address, lower-case */
  to?: string | undefined;
  tag?: { name: string; value: string } | undefined;
  /** created_at ≥ this (ms) */
  createdAfter?: number | undefined;
  /** created_at < this (ms) */
  createdBefore?: number | undefined;
}

/** Newest first by id (ids are time-ordered); one row more than asked tells whether a next page exists. */
export async function listEmails(db: Db, projectId: string, f: ListFilter): Promise<{ emails: Email[]; more: boolean }> {
  const q = db('emails').select(SUMMARY_COLUMNS).where('project_id', projectId);
  if (f.before) q.andWhere('id', '<', f.before);
  if (f.status) q.andWhere('status', f.status);
  if (f.to) q.whereIn('id', db('email_recipients').select('email_id').where({ project_id: projectId, address: f.to }));
  if (f.tag) {
    // tags are stored as JSON.stringify gives them: `"name":"value"` appears only as that member
    // (a quote inside a value is escaped); an exact, case-sensitive substring on both databases
    const member = `${JSON.stringify(f.tag.name)}:${JSON.stringify(f.tag.value)}`;
    q.andWhereRaw(dialectOf(db) === 'pg' ? 'strpos(tags, ?) > 0' : 'instr(tags, ?) > 0', [member]);
  }
  if (f.createdAfter !== undefined) q.andWhere('created_at', '>=', f.createdAfter);
  if (f.createdBefore !== undefined) q.andWhere('created_at', '<', f.createdBefore);
  const rows = (await q.orderBy('id', 'desc').limit(f.limit + 1)) as EmailRow[];
  const page = rows.slice(0, f.limit);
  const recipients = await recipientsOf(db, page.map((r) => r.id));
  return { emails: page.map((r) => emailFromRow(r, recipients.get(r.id)!)), more: rows.length > f.limit };
}

const updateEmailState = prepared(
  (db, status, reason, scheduledAt, attempts, providerId, acceptedAt, updatedAt, id) =>
    db('emails')
      .update({ status, status_reason: reason, scheduled_at: scheduledAt, attempts, provider_message_id: providerId, accepted_at: acceptedAt, updated_at: updatedAt } as Record<string, string>)
      .where('id', id as string),
  8,
);

/** Persist the mutable parts of an email after a state change (the queue's hot path: a prepared statement). */
export async function saveEmailState(db: Db, e: Email): Promise<void> {
  await updateEmailState(db, e.status, e.statusReason, e.scheduledAt, e.attempts, e.providerMessageId, e.acceptedAt, e.updatedAt, e.id);
}

const updateRecipient = prepared(
  (db, status, details, queueRowId, delayNotified, updatedAt, id) =>
    db('email_recipients').update({ status, details, queue_row_id: queueRowId, delay_notified: delayNotified, updated_at: updatedAt } as Record<string, string>).where('id', id as string),
  6,
);

export async function saveRecipient(db: Db, r: Recipient): Promise<void> {
  await updateRecipient(db, r.status, r.details ? JSON.stringify(r.details) : null, r.queueRowId, r.delayNotified, r.updatedAt, r.id);
}

/**
 * The emails of a claim, as lifecycle.ts claimEmail left them: their status,
 * and one more attempt for those in `attempted` (read in the same
 * transaction, so the counter moves as the state machine moved it). Two
 * statements for the whole claim instead of one per email.
 */
export async function saveClaimedEmails(db: Db, emails: Email[], attempted: Set<string>, now: number): Promise<void> {
  for (const counted of [true, false]) {
    const group = emails.filter((e) => attempted.has(e.id) === counted);
    if (!group.length) continue;
    const status = group[0]!.status;
    if (group.some((e) => e.status !== status)) throw new Error('a claim leaves its emails in one status');
    const set = counted ? { status, attempts: db.raw('attempts + 1'), updated_at: now } : { status, updated_at: now };
    await db('emails').whereIn('id', group.map((e) => e.id)).update(set);
  }
}

/** How many emails there are in each status (posthorn queue stats). */
export async function emailStatusCounts(db: Db): Promise<Record<string, number>> {
  const rows = (await db('emails').select('status').count({ n: '*' }).groupBy('status')) as Array<{ status: string; n: number | string }>;
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}
