// What a broadcast is, and the moves of its status (docs/broadcasts.md). Pure.
//
//   draft ──send──▶ sending ──fan-out done──▶ sent
//     │   └─send {scheduled_at}─▶ scheduled ──its time──▶ sending
//     └──────────── cancel (draft, scheduled, sending; sent while emails wait in the queue) ──▶ cancelled
//
// Only the fan-out moves scheduled → sending → sent (or → cancelled when what it sends to is gone);
// the API moves the rest.

import type { Environment } from '../../sending/emails/email.js';

export const BROADCAST_STATUSES = ['draft', 'scheduled', 'sending', 'sent', 'cancelled'] as const;
export type BroadcastStatus = (typeof BROADCAST_STATUSES)[number];

/** The content as the client wrote it (the fields of POST /v1/emails it shares). */
export interface BroadcastContent {
  from: string;
  reply_to?: string[] | undefined;
  subject?: string | undefined;
  html?: string | undefined;
  text?: string | undefined;
  template_id?: string | undefined;
  template_version?: number | undefined;
  tags?: Record<string, string> | undefined;
}

export interface Broadcast {
  id: string;
  projectId: string;
  name: string;
  status: BroadcastStatus;
  content: BroadcastContent;
  audienceId: string | null;
  segmentId: string | null;
  topicId: string | null;
  /** the mode of the key that sent it; null while a draft */
  environment: Environment | null;
  scheduledAt: number | null;
  /** when the fan-out began: contacts created later are not in it */
  startedAt: number | null;
  /** the last contact id the fan-out has dealt with */
  cursor: string | null;
  /** contacts the fan-out has dealt with */
  recipients: number;
  /** emails accepted for them */
  queued: number;
  /** contacts whose address is on the suppression list */
  suppressed: number;
  /** contacts not sent to: unsubscribed from broadcasts or from the topic, or not confirmed */
  skipped: number;
  /** contacts whose email was refused otherwise (a limit, a rendering error) */
  failed: number;
  /** emails taken back out of the outbound queue, never attempted, by the cancel */
  withdrawn: number;
  /** the last refusal's reason, for the operator */
  error: string | null;
  finishedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export type Move = { ok: Broadcast } | { refused: string };

/** POST /send: now (sending) or at `at` (scheduled), by a key of `environment`. */
export function startSending(b: Broadcast, at: number | null, environment: Environment, now: number): Move {
  if (b.status !== 'draft') return { refused: `broadcast ${b.id} is ${b.status}; only a draft can be sent` };
  if (at !== null && at > now)
    return { ok: { ...b, status: 'scheduled', scheduledAt: at, environment, updatedAt: now } };
  return { ok: { ...b, status: 'sending', scheduledAt: null, startedAt: now, environment, updatedAt: now } };
}

/** The fan-out takes up a scheduled broadcast whose time has come. */
export function beginScheduled(b: Broadcast, now: number): Broadcast {
  return b.status === 'scheduled' ? { ...b, status: 'sending', startedAt: now, updatedAt: now } : b;
}

/** A sent broadcast may be cancelled too, while emails of it wait in the queue (the service refuses it when none does). */
export function cancel(b: Broadcast, now: number): Move {
  if (b.status === 'cancelled') return { refused: `broadcast ${b.id} is cancelled already` };
  return { ok: { ...b, status: 'cancelled', finishedAt: b.finishedAt ?? now, updatedAt: now } };
}

/** The cancel took `n` of its emails back out of the queue: they were never sent. */
export const withdrawn = (b: Broadcast, n: number): Broadcast => ({ ...b, withdrawn: b.withdrawn + n });

/** What the broadcast sends to (its audience, segment or topic) is gone: it ends, sending nothing more. */
export function orphan(b: Broadcast, reason: string, now: number): Broadcast {
  return { ...b, status: 'cancelled', error: reason.slice(0, MAX_ERROR), finishedAt: now, updatedAt: now };
}

/** the stored reason's longest length (its column's) */
const MAX_ERROR = 500;

/** What one batch of the fan-out did. */
export interface BatchTally {
  cursor: string | null;
  recipients: number;
  queued: number;
  suppressed: number;
  skipped: number;
  failed: number;
  error: string | null;
  /** no contact is left after this batch */
  last: boolean;
}

export function afterBatch(b: Broadcast, t: BatchTally, now: number): Broadcast {
  return {
    ...b,
    cursor: t.cursor,
    recipients: b.recipients + t.recipients,
    queued: b.queued + t.queued,
    suppressed: b.suppressed + t.suppressed,
    skipped: b.skipped + t.skipped,
    failed: b.failed + t.failed,
    // a pause is over once a batch goes through
    error: (t.error ?? (b.error?.startsWith('paused: ') ? null : b.error))?.slice(0, MAX_ERROR) ?? null,
    ...(t.last ? { status: 'sent' as const, finishedAt: now } : {}),
    updatedAt: now,
  };
}
