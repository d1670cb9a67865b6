import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { notFound, validationError } from '../../../lib/errors.js';
import { iso } from '../../../lib/time.js';
import { validateBody } from '../../../lib/validate.js';
import type { Broadcast, BroadcastStatus } from '../../audience/broadcasts/broadcast.js';
import { CreateBroadcastBody, PatchBroadcastBody } from '../../audience/broadcasts/broadcasts.schema.js';
import { broadcastInResendSyntax, broadcastVariable, translateResend } from './resend-variables.js';

// Resend's broadcasts (docs/resend.md) as ours (docs/broadcasts.md), and ours as Resend shows them.
// Pure. Resend's segments (and audiences, their older name) are our audiences: a segment_id or an
// audience_id names one (aud_…), or one of our segments (seg_…). The subject, html and text are
// Resend's syntax, translated (resend-variables.ts); what has no counterpart is refused by name.

const OneOrMany = Type.Union([Type.String(), Type.Array(Type.String())]);
const OrNull = <T extends TSchema>(t: T) => Type.Optional(Type.Union([t, Type.Null()]));

const fields = {
  name: OrNull(Type.String()),
  segment_id: OrNull(Type.String()),
  audience_id: OrNull(Type.String()),
  html: OrNull(Type.String()),
  text: OrNull(Type.String()),
  reply_to: OrNull(OneOrMany),
  preview_text: OrNull(Type.String()),
  topic_id: OrNull(Type.String()),
};

export const ResendCreateBroadcastBody = Type.Object(
  {
    ...fields,
    from: Type.String(),
    subject: Type.String(),
    send: Type.Optional(Type.Boolean()),
    scheduled_at: OrNull(Type.String()),
  },
  { additionalProperties: true },
);
export type ResendCreateBroadcastBody = Static<typeof ResendCreateBroadcastBody>;

export const ResendUpdateBroadcastBody = Type.Object(
  { ...fields, from: OrNull(Type.String()), subject: OrNull(Type.String()) },
  { additionalProperties: true },
);
export type ResendUpdateBroadcastBody = Static<typeof ResendUpdateBroadcastBody>;

/** `{}` (send now) or `{scheduled_at}` (ISO 8601 or a phrase such as "in 1 hour"). */
export const ResendSendBroadcastBody = Type.Object(
  { scheduled_at: OrNull(Type.String()) },
  { additionalProperties: true },
);

const list = (v: string | string[]) => (typeof v === 'string' ? [v] : v);
const translated = (v: string, field: string) => translateResend(v, field, broadcastVariable);

function refusePreviewText(v: string | null | undefined): void {
  if (v)
    throw validationError(
      'preview_text',
      'is not available here: Posthorn broadcasts have no preview text (a hidden preheader at the top of the html does the same)',
    );
}

/** The audience or segment named by segment_id (or audience_id, its older name), as our fields. */
function targetOf(b: { segment_id?: string | null; audience_id?: string | null }) {
  const segment = b.segment_id ?? undefined;
  const audience = b.audience_id ?? undefined;
  if (segment !== undefined && audience !== undefined && segment !== audience)
    throw validationError(
      'audience_id',
      'names another segment than segment_id: give one (audience_id is its older name)',
    );
  const id = segment ?? audience;
  if (id === undefined) return null;
  if (!/^(aud|seg)_[0-9a-z]{26}$/.test(id)) throw notFound(`segment ${id}`);
  return id.startsWith('seg_') ? { audience_id: null, segment_id: id } : { audience_id: id, segment_id: null };
}

const defined = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null));

/** POST /broadcasts as POST /v1/broadcasts' body (a draft); `send` and `scheduled_at` are the route's. */
export function fromResendBroadcast(b: ResendCreateBroadcastBody): CreateBroadcastBody {
  refusePreviewText(b.preview_text);
  if (b.scheduled_at != null && b.send !== true)
    throw validationError('scheduled_at', 'is only allowed with send: true');
  const target = targetOf(b);
  if (!target) throw validationError('segment_id', 'is required: the segment (or audience) to send to');
  const body = defined({
    name: b.name ?? b.subject.slice(0, 200),
    from: b.from,
    reply_to: b.reply_to == null ? undefined : list(b.reply_to),
    subject: translated(b.subject, 'subject'),
    html: b.html == null ? undefined : translated(b.html, 'html'),
    text: b.text == null ? undefined : translated(b.text, 'text'),
    ...target,
    topic_id: b.topic_id,
  });
  return validateBody<CreateBroadcastBody>(CreateBroadcastBody, body);
}

/** PATCH /broadcasts/{id} as PATCH /v1/broadcasts/{id}'s body; null when it changes nothing. */
export function fromResendBroadcastPatch(b: ResendUpdateBroadcastBody): PatchBroadcastBody | null {
  refusePreviewText(b.preview_text);
  const out: Record<string, unknown> = {};
  if (b.name != null) out.name = b.name;
  if (b.from != null) out.from = b.from;
  for (const f of ['subject', 'html', 'text'] as const) {
    const v = b[f];
    if (v !== undefined) out[f] = v === null ? null : translated(v, f);
  }
  if (b.reply_to !== undefined) out.reply_to = b.reply_to === null ? null : list(b.reply_to);
  Object.assign(out, targetOf(b));
  if (b.topic_id !== undefined) out.topic_id = b.topic_id;
  if (Object.keys(out).length === 0) return null;
  return validateBody<PatchBroadcastBody>(PatchBroadcastBody, out);
}

/**
 * Ours in the words of Resend's SDK type ('draft' | 'queued' | 'sent'): scheduled and sending are
 * `queued` (scheduled_at tells them apart); cancelled is Resend's own `canceled`, which its API
 * answers for a cancelled broadcast though the SDK's type does not list it.
 */
const RESEND_STATUS: Record<BroadcastStatus, 'draft' | 'queued' | 'sent' | 'canceled'> = {
  draft: 'draft',
  scheduled: 'queued',
  sending: 'queued',
  sent: 'sent',
  cancelled: 'canceled',
};

const resendText = (v: string | undefined) => (v === undefined ? null : broadcastInResendSyntax(v));

/** An item of GET /broadcasts. */
export function resendListedBroadcast(b: Broadcast) {
  const target = b.audienceId ?? b.segmentId;
  return {
    id: b.id,
    name: b.name,
    audience_id: target,
    segment_id: target,
    status: RESEND_STATUS[b.status],
    created_at: iso(b.createdAt),
    scheduled_at: iso(b.scheduledAt),
    // when its fan-out began: when Resend would say it was sent
    sent_at: iso(b.startedAt),
  };
}

/** GET /broadcasts/{id}. */
export function resendBroadcast(b: Broadcast) {
  return {
    object: 'broadcast' as const,
    ...resendListedBroadcast(b),
    from: b.content.from,
    subject: resendText(b.content.subject),
    reply_to: b.content.reply_to ?? null,
    preview_text: null,
    topic_id: b.topicId,
    html: resendText(b.content.html),
    text: resendText(b.content.text),
  };
}

/** POST /broadcasts/{id}/duplicate: a draft of the same content for the same segment, named "… (copy)". */
export function duplicateOf(b: Broadcast): CreateBroadcastBody {
  const body = defined({
    ...b.content,
    name: `${b.name} (copy)`.slice(0, 200),
    audience_id: b.audienceId,
    segment_id: b.segmentId,
    topic_id: b.topicId,
  });
  return validateBody<CreateBroadcastBody>(CreateBroadcastBody, body);
}
