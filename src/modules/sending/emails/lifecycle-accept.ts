import { newId } from '../../../lib/ids.js';
import type { OutboxEvent } from '../../notifying/events/events.repo.js';
import type { SuppressionReason } from '../suppressions/suppression.js';
import { emailEvent } from './email-events.js';
import type { Email, EmailStatus, Recipient, RecipientKind } from './email.js';
import type { QueueRow } from './queue.repo.js';

/**
 * The first step of the state machine (lifecycle.ts): an accepted draft
 * becomes an email, its recipients and its queue rows, with their first
 * status and events. Pure: no I/O.
 */

/** An email as the accept builds it, before the state machine gives it and its recipients a status. */
export type EmailDraft = Omit<
  Email,
  'status' | 'statusReason' | 'attempts' | 'providerMessageId' | 'acceptedAt' | 'updatedAt' | 'recipients'
>;

export interface RecipientDraft {
  address: string;
  kind: RecipientKind;
  /** on the project's suppression list at the POST, and why */
  suppressed: SuppressionReason | null;
  /** which queue row it goes out in: its domain (direct mode), '' for one transaction */
  route: string;
}

/**
 * POST → queued, or scheduled with a future scheduled_at (email.scheduled);
 * each recipient queued on the row of its route, or suppressed at once
 * (email.suppressed). The caller has refused a send whose recipients are all
 * suppressed (422): nothing of it is stored.
 */
export function acceptEmail(
  draft: EmailDraft,
  recipients: RecipientDraft[],
  now: number,
): { email: Email; rows: QueueRow[]; events: OutboxEvent[] } {
  const rows = new Map<string, QueueRow>();
  const dueAt = draft.scheduledAt ?? now;
  const list = recipients.map((r): Recipient => {
    let row: QueueRow | null = null;
    if (!r.suppressed) {
      row = rows.get(r.route) ?? null;
      if (!row) {
        row = {
          id: newId('queueRow', now),
          emailId: draft.id,
          projectId: draft.projectId,
          route: r.route,
          state: 'queued',
          attempts: 0,
          nextAttemptAt: dueAt,
          leaseOwner: null,
          leaseUntil: null,
          dataStarted: false,
          bulk: draft.broadcastId !== null,
          createdAt: now,
          updatedAt: now,
        };
        rows.set(r.route, row);
      }
    }
    return {
      id: newId('recipient', now),
      address: r.address,
      kind: r.kind,
      status: r.suppressed ? 'suppressed' : 'queued',
      details: null,
      queueRowId: row?.id ?? null,
      delayNotified: false,
      updatedAt: now,
    };
  });
  const email = newEmail(draft, draft.scheduledAt ? 'scheduled' : 'queued', list, now);
  const events: OutboxEvent[] = [];
  recipients.forEach((r, i) => {
    if (r.suppressed)
      events.push(emailEvent(email, 'email.suppressed', now, list[i].address, { reason: r.suppressed }));
  });
  if (email.scheduledAt !== null)
    events.push(
      emailEvent(email, 'email.scheduled', now, null, { scheduled_at: new Date(email.scheduledAt).toISOString() }),
    );
  return { email, rows: [...rows.values()], events };
}

/**
 * The email of a draft, written out field by field: in V8 a spread that adds
 * fields its source lacks ({...draft, status}) takes a slow path, about ten
 * times the cost of this literal, on the accept's hot path.
 */
function newEmail(d: EmailDraft, status: EmailStatus, recipients: Recipient[], now: number): Email {
  return {
    id: d.id,
    projectId: d.projectId,
    environment: d.environment,
    status,
    statusReason: null,
    from: d.from,
    fromDomain: d.fromDomain,
    to: d.to,
    cc: d.cc,
    bcc: d.bcc,
    replyTo: d.replyTo,
    subject: d.subject,
    html: d.html,
    text: d.text,
    templateId: d.templateId,
    templateVersion: d.templateVersion,
    tags: d.tags,
    headers: d.headers,
    requestId: d.requestId,
    scheduledAt: d.scheduledAt,
    attempts: 0,
    providerMessageId: null,
    messageId: d.messageId,
    acceptedAt: null,
    createdAt: d.createdAt,
    updatedAt: now,
    recipients,
    broadcastId: d.broadcastId,
    contactId: d.contactId,
    reportType: d.reportType ?? null,
    attachmentCount: d.attachmentCount ?? 0,
  };
}
