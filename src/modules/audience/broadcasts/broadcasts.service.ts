import type { Knex } from 'knex';
import { apiError, notFound, validationError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import { idPage, type Page } from '../../../lib/page.js';
import type { Clock } from '../../../lib/time.js';
import { lockRows } from '../../../store/db.js';
import type { Store } from '../../../store/store.js';
import { findAudience } from '../audiences/audiences.repo.js';
import { verifiedDomainsOf } from '../../deliverability/domains/domains.repo.js';
import { prepareEmail, scheduleTime } from '../../sending/emails/prepare.js';
import { withdrawEmails } from '../../sending/emails/store-change.js';
import type { Principal } from '../../account/keys/principal.js';
import { findSegment } from '../segments/segments.repo.js';
import { topicsOfProject } from '../topics/topics.repo.js';
import { cancel, startSending, withdrawn, type Broadcast, type BroadcastContent, type Move } from './broadcast.js';
import { checkContent, compileInline, sendBodyFor } from './broadcast-content.js';
import { broadcastReports } from './broadcast-report.service.js';
import { broadcastTrials, type TrialDeps } from './broadcast-trials.js';
import * as repo from './broadcasts.repo.js';
import type { OutcomeCounts } from './broadcasts.repo.js';
import type { CreateBroadcastBody, PatchBroadcastBody, SendBroadcastBody } from './broadcasts.schema.js';

/** What a broadcast's template is checked with: a render for a sample contact (templates.service.ts renderForSend). */
export type TemplateCheck = (
  projectId: string,
  templateId: string,
  version: number | null,
  variables: Record<string, unknown>,
) => Promise<unknown>;

/** A broadcast with how its emails have fared since (what the API shows of it: broadcasts.presenter.ts). */
export interface CountedBroadcast {
  broadcast: Broadcast;
  outcomes: OutcomeCounts;
}

export interface BroadcastDeps extends TrialDeps {
  store: Store;
  clock: Clock;
  checkTemplate: TemplateCheck;
  /** the fan-out has work (a broadcast sent or scheduled) */
  onSent(): void;
  /** inline content compiled as a check (on the parsing pool in serve: docs/security.md); without it, here */
  checkInline?: (content: BroadcastContent) => Promise<void>;
}

const SAMPLE = {
  contact: { id: 'con_sample', email: 'someone@example.com', first_name: null, last_name: null },
  preferences_url: 'https://example.com/p/sample',
  unsubscribe_url: 'https://example.com/p/sample',
};

const CONTENT_KEYS = [
  'from',
  'reply_to',
  'subject',
  'html',
  'text',
  'template_id',
  'template_version',
  'tags',
] as const;

function contentOf(
  body: Partial<Record<(typeof CONTENT_KEYS)[number], unknown>>,
  base: BroadcastContent | null,
): BroadcastContent {
  const out: Record<string, unknown> = { ...base };
  for (const k of CONTENT_KEYS) {
    if (!(k in body)) continue;
    if (body[k] === null) delete out[k];
    else out[k] = body[k];
  }
  return out as unknown as BroadcastContent;
}

/** from, reply_to and tags as POST /v1/emails checks them (for a sample recipient); the From domain. */
function fromDomainOf(content: BroadcastContent): string {
  return prepareEmail(
    sendBodyFor(content, 'someone@example.com', {
      subject: content.subject ?? 'x',
      html: content.html ?? null,
      text: content.text ?? 'x',
      translation: null,
    }),
    0,
  ).from.domain;
}

/** Everything a draft's content is checked for at each write, as a send of it would be. */
async function checked(deps: BroadcastDeps, b: Broadcast): Promise<Broadcast> {
  const { content } = b;
  checkContent(content);
  if (!b.audienceId && !b.segmentId) throw validationError('audience_id', 'an audience_id or a segment_id is required');
  if (b.audienceId && b.segmentId)
    throw validationError(
      'segment_id',
      'give an audience_id or a segment_id, not both (a segment may have its own audience)',
    );
  fromDomainOf(content);
  if (content.template_id !== undefined)
    await deps.checkTemplate(b.projectId, content.template_id, content.template_version ?? null, SAMPLE);
  else if (deps.checkInline) await deps.checkInline(content);
  else compileInline(content);
  return b;
}

/**
 * The audience, segment and topic it names are the project's; read under the
 * project's lock, which their deletion takes too (list-users.repo.ts).
 */
async function checkRefs(trx: Knex.Transaction, b: Broadcast): Promise<void> {
  if (b.audienceId && !(await findAudience(trx, b.projectId, b.audienceId))) throw notFound(`audience ${b.audienceId}`);
  if (b.segmentId && !(await findSegment(trx, b.projectId, b.segmentId))) throw notFound(`segment ${b.segmentId}`);
  if (b.topicId && !(await topicsOfProject(trx, b.projectId)).some((t) => t.id === b.topicId))
    throw notFound(`topic ${b.topicId}`);
}

function draftOf(projectId: string, body: CreateBroadcastBody, now: number): Broadcast {
  return {
    id: newId('broadcast', now),
    projectId,
    name: body.name,
    status: 'draft',
    content: contentOf(body, null),
    audienceId: body.audience_id ?? null,
    segmentId: body.segment_id ?? null,
    topicId: body.topic_id ?? null,
    environment: null,
    scheduledAt: null,
    startedAt: null,
    cursor: null,
    recipients: 0,
    queued: 0,
    suppressed: 0,
    skipped: 0,
    failed: 0,
    withdrawn: 0,
    error: null,
    finishedAt: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** A live send, as POST /v1/emails would check it: an approved project, a verified From domain. */
async function checkLive(deps: BroadcastDeps, principal: Principal, b: Broadcast): Promise<void> {
  if (!principal.project.approved)
    throw apiError(
      'account_not_approved',
      'live sending waits for this project to be approved; test keys work meanwhile',
    );
  const domain = fromDomainOf(b.content);
  if (!(await verifiedDomainsOf(deps.store.reader, [domain])).has(`${b.projectId}|${domain}`)) {
    throw apiError('domain_not_verified', `the From domain ${domain} is not a verified domain of this project`);
  }
}

/** In the cancel's transaction: its emails still waiting in the queue are taken back; a sent broadcast is cancelled only for those. */
async function withdrawOnCancel(trx: Knex.Transaction, next: Broadcast, before: Broadcast): Promise<Broadcast> {
  const n = await withdrawEmails(trx, next.id);
  if (before.status === 'sent' && n === 0)
    throw apiError('conflict', `broadcast ${next.id} is sent: every email of it has been handed to the MTA`);
  return withdrawn(next, n);
}

async function existing(deps: BroadcastDeps, projectId: string, id: string): Promise<Broadcast> {
  const b = await repo.findBroadcast(deps.store.reader, projectId, id);
  if (!b) throw notFound(`broadcast ${id}`);
  return b;
}

async function counted(deps: BroadcastDeps, list: Broadcast[]): Promise<CountedBroadcast[]> {
  const outcomes = await repo.outcomeCounts(
    deps.store.reader,
    list.map((b) => b.id),
  );
  // outcomeCounts has an entry for every id asked
  return list.map((broadcast) => ({ broadcast, outcomes: outcomes.get(broadcast.id)! }));
}

const countedOne = async (deps: BroadcastDeps, b: Broadcast): Promise<CountedBroadcast> =>
  (await counted(deps, [b]))[0];

/** A move of a broadcast under its row lock, refused with 409 `conflict` when its status does not allow it. */
async function move(
  deps: BroadcastDeps,
  projectId: string,
  id: string,
  step: (b: Broadcast, now: number) => Move,
  then?: (trx: Knex.Transaction, next: Broadcast, before: Broadcast) => Promise<Broadcast>,
): Promise<Broadcast> {
  return deps.store.tx(async (trx) => {
    await lockRows(trx, 'projects', [projectId]);
    await lockRows(trx, 'broadcasts', [id]);
    const b = await repo.findBroadcast(trx, projectId, id);
    if (!b) throw notFound(`broadcast ${id}`);
    const moved = step(b, deps.clock.now());
    if ('refused' in moved) throw apiError('conflict', moved.refused);
    if (moved.ok.status !== 'cancelled') await checkRefs(trx, moved.ok);
    const next = then ? await then(trx, moved.ok, b) : moved.ok;
    await repo.saveBroadcast(trx, next);
    return next;
  });
}

/** PATCH /v1/broadcasts/{id}: fields given replace, null clears; checked as a create is, and only while a draft. */
async function updateDraft(
  deps: BroadcastDeps,
  projectId: string,
  id: string,
  body: PatchBroadcastBody,
): Promise<CountedBroadcast> {
  const current = await existing(deps, projectId, id);
  const pick = <K extends 'audience_id' | 'segment_id' | 'topic_id'>(k: K, was: string | null) =>
    k in body ? (body[k] ?? null) : was;
  const next = await checked(deps, {
    ...current,
    name: body.name ?? current.name,
    content: contentOf(body, current.content),
    audienceId: pick('audience_id', current.audienceId),
    segmentId: pick('segment_id', current.segmentId),
    topicId: pick('topic_id', current.topicId),
  });
  const saved = await move(deps, projectId, id, (b, now) =>
    b.status === 'draft'
      ? { ok: { ...next, updatedAt: now } }
      : { refused: `broadcast ${id} is ${b.status}; only a draft can be changed` },
  );
  return countedOne(deps, saved);
}

/** Rows read upward from a cursor, shown newest first; the cursor names the newest shown while more follow. */
function upwardPage(rows: Broadcast[], limit: number): Page<Broadcast> {
  return { items: rows.slice(0, limit).reverse(), nextCursor: rows.length > limit ? rows[limit - 1].id : null };
}

/** DELETE /v1/broadcasts/{id}: a draft only; one sent or scheduled is cancelled instead. */
async function deleteDraft(deps: BroadcastDeps, projectId: string, id: string): Promise<void> {
  await deps.store.tx(async (trx) => {
    await lockRows(trx, 'broadcasts', [id]);
    const b = await repo.findBroadcast(trx, projectId, id);
    if (!b) throw notFound(`broadcast ${id}`);
    if (b.status !== 'draft')
      throw apiError('conflict', `broadcast ${id} is ${b.status}; only a draft can be deleted (cancel it instead)`);
    await repo.deleteBroadcast(trx, id);
  });
}

export function broadcastService(deps: BroadcastDeps) {
  return {
    async create(projectId: string, body: CreateBroadcastBody) {
      const b = await checked(deps, draftOf(projectId, body, deps.clock.now()));
      await deps.store.tx(async (trx) => {
        await lockRows(trx, 'projects', [projectId]);
        await checkRefs(trx, b);
        await repo.insertBroadcast(trx, b);
      });
      return countedOne(deps, b);
    },
    update: (projectId: string, id: string, body: PatchBroadcastBody) => updateDraft(deps, projectId, id, body),
    async send(principal: Principal, id: string, body: SendBroadcastBody) {
      const projectId = principal.project.id;
      const environment = principal.key.mode;
      const b = await checked(deps, await existing(deps, projectId, id));
      if (environment === 'live') await checkLive(deps, principal, b);
      const at = scheduleTime(body.scheduled_at, deps.clock.now(), 'scheduled_at');
      const sent = await move(deps, projectId, id, (x, now) => startSending(x, at, environment, now));
      deps.onSent();
      return countedOne(deps, sent);
    },
    async cancel(projectId: string, id: string) {
      const done = await move(deps, projectId, id, (b, now) => cancel(b, now), withdrawOnCancel);
      return countedOne(deps, done);
    },
    delete: (projectId: string, id: string) => deleteDraft(deps, projectId, id),
    ...broadcastTrials(deps),
    ...broadcastReports(deps),
    get: async (projectId: string, id: string) => countedOne(deps, await existing(deps, projectId, id)),
    /** Newest first, older than `cursor`; with `newerThan` (Resend's `before`), the page just newer than it. */
    async list(
      projectId: string,
      limit: number,
      cursor: string | undefined,
      newerThan?: string,
    ): Promise<Page<CountedBroadcast>> {
      const page = newerThan
        ? upwardPage(await repo.pageOfBroadcastsNewer(deps.store.reader, projectId, limit, newerThan), limit)
        : idPage(await repo.pageOfBroadcasts(deps.store.reader, projectId, limit, cursor), limit);
      return { items: await counted(deps, page.items), nextCursor: page.nextCursor };
    },
  };
}

export type BroadcastService = ReturnType<typeof broadcastService>;
