import type { Knex } from 'knex';
import { ApiError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { Clock } from '../../lib/time.js';
import type { Logger } from '../../log/logger.js';
import { lockRows } from '../../store/db.js';
import type { Committed, Store } from '../../store/store.js';
import type { PropertyValue } from '../contacts/contact-properties.js';
import { listProperties } from '../contacts/contacts.repo.js';
import type { AcceptRequest, Accepted } from '../emails/accept-rules.js';
import { prepareEmail } from '../emails/prepare.js';
import { insertEvents, type OutboxEvent } from '../events/events.repo.js';
import { signPreferenceToken, preferencesUrl } from '../preferences/token.js';
import { findProjectsById } from '../projects/projects.repo.js';
import { contactValues, matches } from '../segments/segment-filter.js';
import { findSegment } from '../segments/segments.repo.js';
import { subscriptionsOf } from '../topics/topics.repo.js';
import type { RenderedContent } from '../templates/render-version.js';
import { afterBatch, beginScheduled, type BatchTally, type Broadcast } from './broadcast.js';
import { broadcastVariables, compileInline, renderInline, sendBodyFor, type FanOutContact } from './broadcast-content.js';
import * as repo from './broadcasts.repo.js';

/** The accept of this thread (AcceptQueue.storeAlong): a batch's emails and its progress in one commit. */
export interface FanOutAcceptor {
  storeAlong<T>(work: (trx: Knex.Transaction, store: (requests: AcceptRequest[]) => Promise<Array<Accepted | ApiError>>) => Promise<T>): Promise<Committed<T>>;
}

export interface FanOutDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  accept: FanOutAcceptor;
  /** a template_id broadcast's content for one contact (templates.service.ts renderForSend) */
  renderTemplate(projectId: string, templateId: string, version: number | null, variables: Record<string, unknown>, to: string): Promise<RenderedContent>;
  /** the installation's tracking key, which signs preference links */
  key(): Promise<Buffer>;
  /** http.public_url; without it the preference link is empty */
  publicUrl: string | null;
  /** broadcasts.max_per_second: live broadcast emails accepted per second, for the whole process */
  maxPerSecond: number;
}

/** Contacts read per batch: one transaction stores their emails and the cursor after them. */
export const FAN_OUT_BATCH = 500;

/** The batch was overtaken (cancelled, or another process moved the cursor): nothing of it is stored. */
class Overtaken extends Error {}

/**
 * The fan-out of broadcasts (docs/broadcasts.md): each step reads the next
 * contacts after the broadcast's cursor, in id order, makes each one's email
 * (skipping those unsubscribed, not confirmed or out of the topic), and
 * stores the emails through the accept's rules together with the new
 * cursor and counts, in one commit, under the broadcast's row lock and only
 * if the cursor is still where the batch began. A crash before that commit
 * stores none of the batch and the next step does it again; after it, the
 * next step goes on after it: no contact is sent to twice or skipped.
 * Live mail is paced by a token bucket (broadcasts.max_per_second).
 */
export class BroadcastFanOut {
  private tokens: number;
  private filledAt: number;
  private lastDurable: Promise<void> = Promise.resolve();

  constructor(private readonly deps: FanOutDeps) {
    this.tokens = Math.max(1, deps.maxPerSecond);
    this.filledAt = deps.clock.now();
  }

  due(): Promise<Broadcast[]> {
    return repo.broadcastsToFanOut(this.deps.store.reader, this.deps.clock.now());
  }

  nextScheduledAt(): Promise<number | null> {
    return repo.nextScheduledAt(this.deps.store.reader);
  }

  /** Milliseconds until a live email may be accepted again (0: now). */
  paceWait(): number {
    this.refill();
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) / this.deps.maxPerSecond) * 1000);
  }

  private refill(): void {
    const now = this.deps.clock.now();
    this.tokens = Math.min(Math.max(1, this.deps.maxPerSecond), this.tokens + ((now - this.filledAt) / 1000) * this.deps.maxPerSecond);
    this.filledAt = now;
  }

  /** One batch of one broadcast; whether the broadcast has more to do. */
  async step(broadcast: Broadcast): Promise<boolean> {
    const b = broadcast.status === 'scheduled' ? await this.begin(broadcast) : broadcast;
    if (!b || b.status !== 'sending') return false;
    const live = b.environment === 'live';
    const room = live ? Math.floor((this.refill(), this.tokens)) : FAN_OUT_BATCH;
    if (room < 1) return true;
    const batch = await this.prepare(b, Math.min(room, FAN_OUT_BATCH));
    let next: Broadcast;
    try {
      // the next batch is read and rendered while the last one's commit goes to disk; it commits after that
      await this.lastDurable;
      const committed = await this.deps.accept.storeAlong((trx, store) => this.commit(trx, b, batch, store));
      this.lastDurable = committed.durable;
      next = committed.value;
    } catch (e) {
      if (e instanceof Overtaken) return false;
      throw e;
    }
    if (live) this.tokens -= next.queued - b.queued;
    return next.status === 'sending';
  }

  /** A scheduled broadcast whose time has come begins: its contacts are those created by now. */
  private async begin(b: Broadcast): Promise<Broadcast | null> {
    return this.deps.store.tx(async (trx) => {
      await lockRows(trx, 'broadcasts', [b.id]);
      const current = await repo.broadcastById(trx, b.id);
      if (!current || current.status !== 'scheduled') return current;
      const begun = beginScheduled(current, this.deps.clock.now());
      await repo.saveBroadcast(trx, begun);
      return begun;
    });
  }

  /** The next contacts' emails, up to `room` of them: read and rendered outside the transaction. */
  private async prepare(b: Broadcast, room: number): Promise<{ requests: AcceptRequest[]; tally: BatchTally }> {
    const db = this.deps.store.reader;
    const segment = b.segmentId ? await findSegment(db, b.projectId, b.segmentId) : null;
    const rows = await repo.contactsAfter(db, b, b.audienceId ?? segment?.audienceId ?? null, FAN_OUT_BATCH);
    const properties = await listProperties(db, b.projectId);
    const topics = b.topicId ? await subscriptionsOf(db, b.projectId, rows.map((r) => r.id)) : null;
    const project = (await findProjectsById(db, [b.projectId])).get(b.projectId);
    const inline = compileInline(b.content);
    const key = await this.deps.key();
    const requestId = newId('request', this.deps.clock.now());
    const tally: BatchTally = { cursor: b.cursor, recipients: 0, queued: 0, suppressed: 0, skipped: 0, failed: 0, error: null, last: rows.length < FAN_OUT_BATCH };
    const requests: AcceptRequest[] = [];
    for (const row of rows) {
      if (requests.length >= room) {
        tally.last = false;
        break;
      }
      tally.cursor = row.id;
      const contact: FanOutContact & { createdAt: number } = { id: row.id, email: row.email, firstName: row.first_name, lastName: row.last_name, properties: JSON.parse(row.properties) as Record<string, PropertyValue>, createdAt: Number(row.created_at) };
      if (segment && !matches(segment.compiled, contactValues(contact, properties))) continue;
      tally.recipients++;
      if (Boolean(row.unsubscribed) || Boolean(row.pending) || (topics && !topics.get(row.id)?.[b.topicId!])) {
        tally.skipped++;
        continue;
      }
      try {
        const variables = broadcastVariables(contact, properties, this.deps.publicUrl ? preferencesUrl(this.deps.publicUrl, signPreferenceToken(key, contact.id)) : '');
        const rendered = inline ? renderInline(inline, variables) : await this.deps.renderTemplate(b.projectId, b.content.template_id!, b.content.template_version ?? null, variables, contact.email);
        const prepared = prepareEmail(sendBodyFor(b.content, contact.email, rendered), this.deps.clock.now());
        if (!inline) [prepared.templateId, prepared.templateVersion] = [b.content.template_id!, b.content.template_version ?? null];
        requests.push({ project: project!, environment: b.environment!, prepared, attachments: [], requestId, idempotency: null, broadcast: { id: b.id, contactId: contact.id } });
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        tally.failed++;
        tally.error = `${contact.email}: ${e.message}`;
      }
    }
    return { requests, tally };
  }

  /** In the accept's transaction: the batch's emails, then the broadcast's cursor and counts (and broadcast.sent at the end). */
  private async commit(trx: Knex.Transaction, b: Broadcast, batch: { requests: AcceptRequest[]; tally: BatchTally }, store: (r: AcceptRequest[]) => Promise<Array<Accepted | ApiError>>): Promise<Broadcast> {
    await lockRows(trx, 'broadcasts', [b.id]);
    const current = await repo.broadcastById(trx, b.id);
    if (!current || current.status !== 'sending' || current.cursor !== b.cursor) throw new Overtaken();
    const tally = { ...batch.tally };
    for (const outcome of batch.requests.length ? await store(batch.requests) : []) {
      if (!(outcome instanceof ApiError)) tally.queued++;
      else if (outcome.code === 'recipient_suppressed') tally.suppressed++;
      else {
        tally.failed++;
        tally.error = outcome.message;
      }
    }
    const now = this.deps.clock.now();
    const next = afterBatch(current, tally, now);
    await repo.saveBroadcast(trx, next);
    if (next.status === 'sent') await insertEvents(trx, [sentEvent(next, now)]);
    return next;
  }
}

/** broadcast.sent: the fan-out is over; the counts so far (the emails' own events follow). */
function sentEvent(b: Broadcast, now: number): OutboxEvent {
  return {
    id: newId('event', now),
    projectId: b.projectId,
    type: 'broadcast.sent',
    emailId: null,
    recipient: null,
    simulated: b.environment === 'test',
    data: { broadcast_id: b.id, name: b.name, environment: b.environment, recipients: b.recipients, sent: b.queued, suppressed: b.suppressed, skipped: b.skipped, failed: b.failed },
    createdAt: now,
  };
}
