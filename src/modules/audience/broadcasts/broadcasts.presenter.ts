import { iso } from '../../../lib/time.js';
import type { RenderedContent } from '../../sending/templates/render-version.js';
import type { Broadcast } from './broadcast.js';
import type { HourBucket } from './broadcast-report.js';
import type { OutcomeCounts } from './broadcasts.repo.js';
import type { CountedBroadcast } from './broadcasts.service.js';

const isoOrNull = (t: number | null) => (t === null ? null : iso(t));

/**
 * The counts of docs/broadcasts.md: what the fan-out did with each contact
 * (recipients, sent, suppressed, skipped, failed) and how the emails fared
 * since (delivered, bounced, complained, opened, clicked, unsubscribed).
 */
function counts(b: Broadcast, o: OutcomeCounts) {
  const status = (s: string) => o.statuses.get(s) ?? 0;
  const event = (t: string) => o.events.get(t) ?? 0;
  return {
    recipients: b.recipients,
    // emails the cancel took back out of the queue were never sent
    sent: b.queued - b.withdrawn,
    delivered: status('delivered') + status('complained'),
    bounced: status('bounced'),
    complained: status('complained'),
    opened: event('email.opened'),
    clicked: event('email.clicked'),
    unsubscribed: event('email.unsubscribed'),
    // refused at the fan-out, and recipients the attempt found suppressed since
    suppressed: b.suppressed + status('suppressed'),
    skipped: b.skipped,
    failed: b.failed + status('failed'),
    withdrawn: b.withdrawn,
  };
}

/** docs/broadcasts.md: the broadcast, its content and its counts. */
export function presentBroadcast({ broadcast: b, outcomes }: CountedBroadcast) {
  return {
    object: 'broadcast' as const,
    id: b.id,
    name: b.name,
    status: b.status,
    from: b.content.from,
    reply_to: b.content.reply_to ?? null,
    subject: b.content.subject ?? null,
    html: b.content.html ?? null,
    text: b.content.text ?? null,
    template_id: b.content.template_id ?? null,
    template_version: b.content.template_version ?? null,
    audience_id: b.audienceId,
    segment_id: b.segmentId,
    topic_id: b.topicId,
    tags: b.content.tags ?? {},
    environment: b.environment,
    scheduled_at: isoOrNull(b.scheduledAt),
    started_at: isoOrNull(b.startedAt),
    finished_at: isoOrNull(b.finishedAt),
    counts: counts(b, outcomes),
    last_error: b.error,
    created_at: iso(b.createdAt),
    updated_at: iso(b.updatedAt),
  };
}

/** DELETE /v1/broadcasts/{id}: the id as asked. */
export const presentDeletedBroadcast = (id: string) => ({ object: 'broadcast' as const, id, deleted: true });

/** GET /v1/broadcasts/{id}/report (docs/broadcasts.md "The report"). */
export function presentBroadcastReport(r: {
  counted: CountedBroadcast;
  byReason: Array<{ reason: string; count: number }>;
  byType: Array<{ bounce_type: string; count: number }>;
  hours: HourBucket[];
}) {
  const b = presentBroadcast(r.counted);
  return {
    object: 'broadcast_report' as const,
    broadcast_id: b.id,
    status: b.status,
    counts: b.counts,
    bounces: { by_reason: r.byReason, by_type: r.byType },
    hourly: r.hours,
  };
}

/** POST /v1/broadcasts/{id}/preview: what the contact would get. */
export function presentBroadcastPreview(
  id: string,
  p: { contact: { id: string; email: string }; rendered: RenderedContent & { version: number | null } },
) {
  return {
    object: 'broadcast_preview' as const,
    broadcast_id: id,
    contact_id: p.contact.id,
    to: p.contact.email,
    subject: p.rendered.subject,
    html: p.rendered.html,
    text: p.rendered.text,
    template_version: p.rendered.version,
  };
}
