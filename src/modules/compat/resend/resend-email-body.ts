import { Type, type Static } from '@sinclair/typebox';
import { validationError } from '../../../lib/errors.js';
import { validateBody } from '../../../lib/validate.js';
import { SendEmailBody } from '../../sending/emails/emails.schema.js';
import { naturalTime } from './natural-time.js';

// Resend's send body (POST /emails, each email of POST /emails/batch) and how it becomes ours:
// recipients as a string or a list, `tags` as [{name, value}], `template: {id, variables}`, and
// `scheduled_at` also as a phrase ("in 1 min"). Fields Resend's API does not know are ignored, as
// Resend ignores them; what has no counterpart here is refused by name (docs/resend.md).

const OneOrMany = Type.Union([Type.String(), Type.Array(Type.String())]);

export const ResendEmailBody = Type.Object(
  {
    from: Type.String(),
    to: Type.Optional(OneOrMany),
    cc: Type.Optional(OneOrMany),
    bcc: Type.Optional(OneOrMany),
    reply_to: Type.Optional(OneOrMany),
    subject: Type.Optional(Type.String()),
    html: Type.Optional(Type.String()),
    text: Type.Optional(Type.String()),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    scheduled_at: Type.Optional(Type.String()),
    attachments: Type.Optional(
      Type.Array(
        Type.Object({
          content: Type.Optional(Type.String()),
          filename: Type.Optional(Type.String()),
          path: Type.Optional(Type.String()),
          content_type: Type.Optional(Type.String()),
          content_id: Type.Optional(Type.String()),
        }),
      ),
    ),
    tags: Type.Optional(Type.Array(Type.Object({ name: Type.String(), value: Type.String() }))),
    template: Type.Optional(
      Type.Object({ id: Type.String(), variables: Type.Optional(Type.Record(Type.String(), Type.Unknown())) }),
    ),
    topic_id: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);
export type ResendEmailBody = Static<typeof ResendEmailBody>;

const list = (v: string | string[] | undefined): string[] | undefined =>
  v === undefined ? undefined : typeof v === 'string' ? [v] : v;

/**
 * Resend's body as ours (POST /v1/emails), checked against ours: what it refuses names the field
 * as Resend's body has it (to[0], tags.kind, scheduled_at).
 */
export function fromResendEmail(b: ResendEmailBody, now: number): SendEmailBody {
  if (b.topic_id !== undefined)
    throw validationError(
      'topic_id',
      'is not available here: a single email has no topic (topics apply to broadcasts, docs/resend.md)',
    );
  const body: Record<string, unknown> = {
    from: b.from,
    to: list(b.to),
    cc: list(b.cc),
    bcc: list(b.bcc),
    reply_to: list(b.reply_to),
    subject: b.subject,
    html: b.html,
    text: b.text,
    headers: b.headers,
    scheduled_at: b.scheduled_at === undefined ? undefined : scheduledAt(b.scheduled_at, now),
    attachments: b.attachments,
    tags: b.tags === undefined ? undefined : tagsOf(b.tags),
    template_id: b.template?.id,
    variables: b.template?.variables,
  };
  for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
  return validateBody<SendEmailBody>(SendEmailBody, body);
}

/** An ISO 8601 time as it is; one of Resend's phrases as the time it names. */
export function scheduledAt(value: string, now: number): string {
  if (/^\d{4}-\d{2}-\d{2}T/.test(value)) return value;
  const t = naturalTime(value, now);
  if (t === null)
    throw validationError(
      'scheduled_at',
      'must be an ISO 8601 time or a phrase such as "in 1 min", "in 2 hours", "tomorrow at 9am" or "friday at 3pm ET"',
    );
  return new Date(t).toISOString();
}

function tagsOf(tags: Array<{ name: string; value: string }>): Record<string, string> {
  const out: Record<string, string> = {};
  tags.forEach((t, i) => {
    if (Object.hasOwn(out, t.name)) throw validationError(`tags[${i}].name`, `names the tag "${t.name}" twice`);
    out[t.name] = t.value;
  });
  return out;
}
