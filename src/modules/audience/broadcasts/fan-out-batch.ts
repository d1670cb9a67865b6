import { ApiError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import type { Db } from '../../../store/db.js';
import { findAudience } from '../audiences/audiences.repo.js';
import type { PropertyValue } from '../contacts/contact-properties.js';
import { listProperties } from '../contacts/contacts.repo.js';
import type { AcceptRequest } from '../../sending/emails/accept-rules.js';
import { prepareEmail } from '../../sending/emails/prepare.js';
import { preferencesUrl, signPreferenceToken } from '../preferences/preference-token.js';
import { periodsOf } from '../../account/projects/periods.js';
import { findProjectsById, type Project } from '../../account/projects/projects.repo.js';
import { usageCounts } from '../../account/projects/usage.repo.js';
import { contactValues, matches } from '../segments/segment-filter.js';
import { findSegment } from '../segments/segments.repo.js';
import type { RenderedContent } from '../../sending/templates/render-version.js';
import type { TemplateVersion } from '../../sending/templates/template.js';
import { subscriptionsOf, topicsOfProject } from '../topics/topics.repo.js';
import type { BatchTally, Broadcast } from './broadcast.js';
import { broadcastVariables, renderInline, sendBodyFor, type FanOutContact } from './broadcast-content.js';
import { contactsAfter } from './broadcasts.repo.js';

/** The broadcast cannot go on now (its project, its domain, its template, the limits); it is tried again later, from the same contact. */
export class Paused extends Error {}

/** What the broadcast sends to is gone: it ends (cancelled, with the reason). */
export class Orphaned extends Error {}

/** Of a project's daily and monthly limits, broadcasts use at most this share: the rest is kept for transactional mail. */
export const BROADCAST_SHARE_OF_LIMITS = 0.9;

export interface BatchSource {
  db: Db;
  now: number;
  /** the installation's tracking key, which signs preference links */
  key: Buffer;
  publicUrl: string | null;
  /** the inline content compiled (null for a template_id broadcast) */
  inline: TemplateVersion | null;
  renderTemplate(
    projectId: string,
    templateId: string,
    version: number | null,
    variables: Record<string, unknown>,
    to: string,
  ): Promise<{ version: number; rendered: RenderedContent }>;
}

/**
 * The next contacts' emails, at most `room` of them, read and rendered
 * outside the transaction that stores them: the contacts after the cursor
 * (read a little beyond `room`, for those skipped), those of a segment
 * tested against its filter, each skipped when unsubscribed, not confirmed
 * or out of the topic, and the others' sends prepared as POST /v1/emails
 * would prepare them.
 */
// long: one pass over the batch's contacts, each decided in order; the cursor stops where the room ends
export async function prepareBatch(
  src: BatchSource,
  b: Broadcast,
  room: number,
  batchSize: number,
): Promise<{ requests: AcceptRequest[]; tally: BatchTally }> {
  const { db } = src;
  const project = await sendingProject(db, b);
  const segment = b.segmentId ? await findSegment(db, b.projectId, b.segmentId) : null;
  const audienceId = b.audienceId ?? segment?.audienceId ?? null;
  if (b.segmentId && !segment) throw new Orphaned(`its segment ${b.segmentId} was deleted`);
  if (audienceId && !(await findAudience(db, b.projectId, audienceId)))
    throw new Orphaned(`its audience ${audienceId} was deleted`);
  if (b.topicId && !(await topicsOfProject(db, b.projectId)).some((t) => t.id === b.topicId))
    throw new Orphaned(`its topic ${b.topicId} was deleted`);
  room = Math.min(room, await allowance(db, project, b, src.now));
  // a paced batch reads a little beyond its room, for the contacts it skips
  const readLimit = b.environment === 'live' ? Math.min(batchSize, Math.max(2 * room, 50)) : batchSize;
  const rows = await contactsAfter(db, b, audienceId, readLimit);
  const properties = await listProperties(db, b.projectId);
  const topics = b.topicId
    ? await subscriptionsOf(
        db,
        b.projectId,
        rows.map((r) => r.id),
      )
    : null;
  const requestId = newId('request', src.now);
  const tally: BatchTally = {
    cursor: b.cursor,
    recipients: 0,
    queued: 0,
    suppressed: 0,
    skipped: 0,
    failed: 0,
    error: null,
    last: rows.length < readLimit,
  };
  const requests: AcceptRequest[] = [];
  for (const row of rows) {
    if (requests.length >= room) {
      tally.last = false;
      break;
    }
    tally.cursor = row.id;
    const contact: FanOutContact & { createdAt: number } = {
      id: row.id,
      email: row.email,
      firstName: row.first_name,
      lastName: row.last_name,
      properties: JSON.parse(row.properties) as Record<string, PropertyValue>,
      createdAt: Number(row.created_at),
    };
    if (segment && !matches(segment.compiled, contactValues(contact, properties))) continue;
    tally.recipients++;
    if (Boolean(row.unsubscribed) || Boolean(row.pending) || (topics && !topics.get(row.id)?.[b.topicId!])) {
      tally.skipped++;
      continue;
    }
    try {
      const variables = broadcastVariables(
        contact,
        properties,
        src.publicUrl ? preferencesUrl(src.publicUrl, signPreferenceToken(src.key, contact.id)) : '',
      );
      const made = src.inline
        ? { version: null, rendered: renderInline(src.inline, variables) }
        : await src.renderTemplate(
            b.projectId,
            b.content.template_id!,
            b.content.template_version ?? null,
            variables,
            contact.email,
          );
      const prepared = prepareEmail(sendBodyFor(b.content, contact.email, made.rendered), src.now);
      if (made.version !== null)
        [prepared.templateId, prepared.templateVersion] = [b.content.template_id!, made.version];
      requests.push({
        project,
        environment: b.environment!,
        prepared,
        attachments: [],
        requestId,
        idempotency: null,
        broadcast: { id: b.id, contactId: contact.id },
      });
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      // the template itself (deleted, a version gone) stops every contact alike: wait, do not fail them all
      if (e.field === 'template_id' || e.field === 'template_version') throw new Paused(e.message);
      tally.failed++;
      tally.error = `${contact.email}: ${e.message}`;
    }
  }
  return { requests, tally };
}

/** The project, as it is now: a live broadcast waits while its project is not approved or is suspended. */
async function sendingProject(db: Db, b: Broadcast): Promise<Project> {
  const project = (await findProjectsById(db, [b.projectId])).get(b.projectId);
  if (!project) throw new Orphaned('its project was deleted');
  if (b.environment === 'live' && project.suspended) throw new Paused('the project is suspended');
  if (b.environment === 'live' && !project.approved)
    throw new Paused('live sending waits for this project to be approved');
  return project;
}

/**
 * How many more live recipients the broadcast may take now: its share of
 * what is left of the daily and monthly limits (0 = unlimited), so that
 * receipts and password resets never find the limit used up by a newsletter.
 */
async function allowance(db: Db, project: Project, b: Broadcast, now: number): Promise<number> {
  if (b.environment !== 'live') return Infinity;
  const { day, month } = periodsOf(now);
  const used = await usageCounts(db, [project.id], [day, month]);
  let left = Infinity;
  for (const [limit, period, what] of [
    [project.limits.daily, day, 'daily'],
    [project.limits.monthly, month, 'monthly'],
  ] as const) {
    if (limit <= 0) continue;
    const mine = Math.floor(limit * BROADCAST_SHARE_OF_LIMITS) - (used.get(`${project.id}|${period}`) ?? 0);
    if (mine <= 0)
      throw new Paused(
        `${Math.round(BROADCAST_SHARE_OF_LIMITS * 100)}% of the project's ${what} limit (${limit}) is used; the rest is kept for transactional mail`,
      );
    left = Math.min(left, mine);
  }
  return left;
}
