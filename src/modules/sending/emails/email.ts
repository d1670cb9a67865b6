// What an email and its recipients are, as the state machine (lifecycle.ts),
// the repos and the presenter see them. Types only: the statuses are moved by
// lifecycle.ts alone (LIFECYCLE.md).

import type { BounceType } from '../../receiving/bounces/reasons.js';

export const EMAIL_STATUSES = [
  'scheduled',
  'queued',
  'submitting',
  'accepted',
  'ambiguous',
  'failed',
  'suppressed',
  'cancelled',
] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];
export const RECIPIENT_STATUSES = [
  'queued',
  'deferred',
  'delivered',
  'bounced',
  'complained',
  'failed',
  'ambiguous',
  'suppressed',
  'cancelled',
] as const;
export type RecipientStatus = (typeof RECIPIENT_STATUSES)[number];
export type Environment = 'live' | 'test';
export type RecipientKind = 'to' | 'cc' | 'bcc';

export interface RecipientDetails {
  reply?: string;
  bounce_type?: BounceType;
  status?: string;
  mx?: string;
  reason?: string;
}

export interface Recipient {
  id: string;
  address: string;
  kind: RecipientKind;
  status: RecipientStatus;
  details: RecipientDetails | null;
  /** the queue row that carries it (queue.repo.ts); null once it needs none (suppressed) */
  queueRowId: string | null;
  delayNotified: boolean;
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
  messageId: string;
  acceptedAt: number | null;
  createdAt: number;
  updatedAt: number;
  recipients: Recipient[];
  /** the broadcast (bro_…) and contact (con_…) it was fanned out for; null for a send of the API or of SMTP submission */
  broadcastId: string | null;
  contactId: string | null;
  /** a report the appliance mails itself (migration 0035): `tlsrpt`, a TLS report (RFC 8460 §5.3); never set by a send */
  reportType?: 'tlsrpt' | null;
  /** how many attachments it has, when known without another read (the accept built it, or the worker's claim counted them) */
  attachmentCount?: number;
}

export interface StoredAttachment {
  filename: string;
  contentType: string;
  contentId: string | null;
  content: Buffer;
}
