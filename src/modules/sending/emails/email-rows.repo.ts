import type { Knex } from 'knex';
import type { Db } from '../../../store/db.js';
import { listParam, oneOf, prepared } from '../../../store/prepared.js';
import { insertRows } from '../../../store/insert-rows.js';
import { insertAttachments } from './email-attachments.repo.js';
import { insertRecipients } from './email-recipients.repo.js';
import type { Email, EmailStatus, Environment, Recipient, StoredAttachment } from './email.js';

/**
 * The emails table: its row shape and mappers (emails.repo.ts reads with
 * them), the insert of new emails with their recipients and attachments, and
 * the writes of an email's state.
 */

export interface EmailRow {
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
  report_type?: string | null;
}

export const EMAIL_COLUMNS = [
  'id',
  'project_id',
  'environment',
  'status',
  'status_reason',
  'from_header',
  'from_domain',
  'to_list',
  'cc_list',
  'bcc_list',
  'reply_to',
  'subject',
  'body_html',
  'body_text',
  'template_id',
  'template_version',
  'tags',
  'headers',
  'request_id',
  'scheduled_at',
  'attempts',
  'provider_message_id',
  'message_id',
  'accepted_at',
  'created_at',
  'updated_at',
  'broadcast_id',
  'contact_id',
  'report_type',
] as const;

/** The list view does not need the bodies. */
export const SUMMARY_COLUMNS = EMAIL_COLUMNS.filter((c) => c !== 'body_html' && c !== 'body_text');

const num = (v: number | null) => (v == null ? null : Number(v));

export function emailFromRow(r: EmailRow, recipients: Recipient[]): Email {
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
    reportType: (r.report_type as Email['reportType']) ?? null,
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
    report_type: e.reportType ?? null,
  };
}

export async function insertEmails(
  db: Db,
  emails: Email[],
  attachments: Map<string, StoredAttachment[]> = new Map(),
): Promise<void> {
  if (!emails.length) return;
  await insertRows(db, 'emails', emails.map(emailRow) as unknown as Array<Record<string, unknown>>);
  await insertRecipients(db, emails);
  await insertAttachments(db, attachments);
}

const updateEmailState = prepared(
  (db, status, reason, scheduledAt, attempts, providerId, acceptedAt, updatedAt, id) =>
    db('emails')
      .update({
        status,
        status_reason: reason,
        scheduled_at: scheduledAt,
        attempts,
        provider_message_id: providerId,
        accepted_at: acceptedAt,
        updated_at: updatedAt,
      } as Record<string, string>)
      .where('id', id as string),
  8,
);

/** Persist the mutable parts of an email after a state change (the queue's hot path: a prepared statement). */
export async function saveEmailState(db: Db, e: Email): Promise<void> {
  await updateEmailState(
    db,
    e.status,
    e.statusReason,
    e.scheduledAt,
    e.attempts,
    e.providerMessageId,
    e.acceptedAt,
    e.updatedAt,
    e.id,
  );
}

const claimCounted = prepared(
  (db, status, now, ids) =>
    db('emails')
      .update({ status, attempts: db.raw('attempts + 1'), updated_at: now } as Record<string, unknown>)
      .whereIn('id', oneOf(db, ids)),
  3,
);
const claimUncounted = prepared(
  (db, status, now, ids) =>
    db('emails')
      .update({ status, updated_at: now } as Record<string, unknown>)
      .whereIn('id', oneOf(db, ids)),
  3,
);

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
    const status = group[0].status;
    if (group.some((e) => e.status !== status)) throw new Error('a claim leaves its emails in one status');
    await (counted ? claimCounted : claimUncounted)(db, status, now, listParam(group.map((e) => e.id)));
  }
}

/**
 * Emails taken back before any attempt, with their recipients, queue rows and unsubscribe links
 * (store-change.ts withdrawEmails; they have no events: a live email has none before its attempt).
 */
export async function deleteEmails(trx: Knex.Transaction, ids: string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 500) {
    const some = ids.slice(i, i + 500);
    await trx('outbound_queue').whereIn('email_id', some).delete();
    await trx('email_recipients').whereIn('email_id', some).delete();
    await trx('unsubscribe_links').whereIn('email_id', some).delete();
    await trx('emails').whereIn('id', some).delete();
  }
}
