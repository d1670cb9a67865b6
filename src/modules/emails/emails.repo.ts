import type { Db } from '../../store/store.js';

export const EMAIL_STATUSES = ['scheduled', 'queued', 'submitting', 'accepted', 'ambiguous', 'failed', 'suppressed'] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];
export type Environment = 'live' | 'test';
export type RecipientKind = 'to' | 'cc' | 'bcc';

export interface Recipient {
  id: string;
  address: string;
  kind: RecipientKind;
  status: string;
  updatedAt: number;
}

export interface Email {
  id: string;
  projectId: string;
  environment: Environment;
  status: EmailStatus;
  statusReason: string | null;
  from: string;
  fromDomain: string;
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo: string[] | null;
  subject: string;
  html: string | null;
  text: string | null;
  templateId: string | null;
  templateVersion: number | null;
  tags: Record<string, string>;
  headers: Record<string, string>;
  requestId: string;
  scheduledAt: number | null;
  attempts: number;
  providerMessageId: string | null;
  createdAt: number;
  updatedAt: number;
  recipients: Recipient[];
}

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
  body_html: string | null;
  body_text: string | null;
  template_id: string | null;
  template_version: number | null;
  tags: string;
  headers: string;
  request_id: string;
  scheduled_at: number | null;
  attempts: number;
  provider_message_id: string | null;
  created_at: number;
  updated_at: number;
}

const EMAIL_COLUMNS = [
  'id', 'project_id', 'environment', 'status', 'status_reason', 'from_header', 'from_domain', 'to_list', 'cc_list', 'bcc_list', 'reply_to',
  'subject', 'body_html', 'body_text', 'template_id', 'template_version', 'tags', 'headers', 'request_id', 'scheduled_at', 'attempts',
  'provider_message_id', 'created_at', 'updated_at',
] as const;

/** The list view does not need the bodies. */
const SUMMARY_COLUMNS = EMAIL_COLUMNS.filter((c) => c !== 'body_html' && c !== 'body_text');

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
    templateVersion: r.template_version == null ? null : Number(r.template_version),
    tags: JSON.parse(r.tags) as Record<string, string>,
    headers: JSON.parse(r.headers) as Record<string, string>,
    requestId: r.request_id,
    scheduledAt: r.scheduled_at == null ? null : Number(r.scheduled_at),
    attempts: Number(r.attempts),
    providerMessageId: r.provider_message_id,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    recipients,
  };
}

export async function insertEmail(db: Db, e: Email): Promise<void> {
  await db('emails').insert({
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
    created_at: e.createdAt,
    updated_at: e.updatedAt,
  });
  if (e.recipients.length) {
    await db('email_recipients').insert(
      e.recipients.map((r) => ({ id: r.id, email_id: e.id, project_id: e.projectId, address: r.address, kind: r.kind, status: r.status, updated_at: r.updatedAt })),
    );
  }
}

async function recipientsOf(db: Db, emailIds: string[]): Promise<Map<string, Recipient[]>> {
  const byEmail = new Map<string, Recipient[]>(emailIds.map((id) => [id, []]));
  if (!emailIds.length) return byEmail;
  const rows = (await db('email_recipients')
    .select('id', 'email_id', 'address', 'kind', 'status', 'updated_at')
    .whereIn('email_id', emailIds)
    .orderBy('id', 'asc')) as Array<{ id: string; email_id: string; address: string; kind: string; status: string; updated_at: number }>;
  for (const r of rows) byEmail.get(r.email_id)!.push({ id: r.id, address: r.address, kind: r.kind as RecipientKind, status: r.status, updatedAt: Number(r.updated_at) });
  return byEmail;
}

/** An email of this project, or null: another project's id is simply not found. */
export async function findEmail(db: Db, projectId: string, id: string): Promise<Email | null> {
  const row = (await db('emails').select(EMAIL_COLUMNS).where({ id, project_id: projectId }).first()) as EmailRow | undefined;
  if (!row) return null;
  return emailFromRow(row, (await recipientsOf(db, [id])).get(id)!);
}

export interface ListFilter {
  limit: number;
  /** ids strictly older than this one */
  before?: string | undefined;
  status?: EmailStatus | undefined;
  /** bare address, lower-case */
  to?: string | undefined;
}

/** Newest first by id (ids are time-ordered); one row more than asked tells whether a next page exists. */
export async function listEmails(db: Db, projectId: string, f: ListFilter): Promise<{ emails: Email[]; more: boolean }> {
  const q = db('emails').select(SUMMARY_COLUMNS).where('project_id', projectId);
  if (f.before) q.andWhere('id', '<', f.before);
  if (f.status) q.andWhere('status', f.status);
  if (f.to) q.whereIn('id', db('email_recipients').select('email_id').where({ project_id: projectId, address: f.to }));
  const rows = (await q.orderBy('id', 'desc').limit(f.limit + 1)) as EmailRow[];
  const page = rows.slice(0, f.limit);
  const recipients = await recipientsOf(db, page.map((r) => r.id));
  return { emails: page.map((r) => emailFromRow(r, recipients.get(r.id)!)), more: rows.length > f.limit };
}
