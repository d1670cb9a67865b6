import { apiError, notFound, validationError } from '../../../lib/errors.js';
import { broadcastUsing } from '../topics/list-users.repo.js';
import { lockRows } from '../../../store/db.js';
import { newId } from '../../../lib/ids.js';
import { idPage, type Page } from '../../../lib/page.js';
import type { Clock } from '../../../lib/time.js';
import type { Store } from '../../../store/store.js';
import { findAudience } from '../audiences/audiences.repo.js';
import {
  listProperties,
  pageOfContacts,
  withLists,
  type Contact,
  type ContactWithLists,
} from '../contacts/contacts.repo.js';
import { compileFilter, contactValues, matches } from './segment-filter.js';
import * as repo from './segments.repo.js';
import type { Segment } from './segments.repo.js';

export interface SegmentDeps {
  store: Store;
  clock: Clock;
}

/** Contacts read per page while a segment is evaluated. */
const SCAN = 500;

async function existing(deps: SegmentDeps, projectId: string, id: string): Promise<Segment> {
  const s = await repo.findSegment(deps.store.knex, projectId, id);
  if (!s) throw notFound(`segment ${id}`);
  return s;
}

/**
 * The segment's members now, newest first, a page at a time: the contacts
 * (of its audience, when it has one) read in id order and tested against the
 * filter, until a page is full. A pending contact (a signup not confirmed) is
 * no member: nothing is sent to it.
 */
async function members(
  deps: SegmentDeps,
  projectId: string,
  id: string,
  limit: number,
  cursor: string | undefined,
): Promise<Page<ContactWithLists>> {
  const s = await existing(deps, projectId, id);
  const properties = await listProperties(deps.store.reader, projectId);
  const found: Contact[] = [];
  let before = cursor;
  for (;;) {
    const rows = await pageOfContacts(deps.store.reader, projectId, {
      limit: SCAN,
      before,
      audienceId: s.audienceId ?? undefined,
    });
    for (const c of rows.slice(0, SCAN))
      if (found.length <= limit && !c.pending && matches(s.compiled, contactValues(c, properties))) found.push(c);
    if (found.length > limit || rows.length <= SCAN) break;
    before = rows[SCAN - 1].id;
  }
  const page = idPage(found, limit);
  return { items: await withLists(deps.store.reader, projectId, page.items), nextCursor: page.nextCursor };
}

/** Contacts a count reads at most: past it, the count says "at least" (a count follows typing in the dashboard). */
export const COUNT_SCAN_LIMIT = 50_000;

/**
 * How many contacts a filter not saved yet matches now (of an audience, when given), as a segment of it
 * would: pending contacts are no members. A mistake in the filter is a 400 on `filter`, as on create.
 */
async function countMatching(
  deps: SegmentDeps,
  projectId: string,
  body: { audience_id?: string | undefined; filter: string },
): Promise<{ count: number; complete: boolean }> {
  if (body.audience_id && !(await findAudience(deps.store.reader, projectId, body.audience_id)))
    throw notFound(`audience ${body.audience_id}`);
  const properties = await listProperties(deps.store.reader, projectId);
  const compiled = compileFilter(body.filter, properties);
  if (!compiled.ok) throw validationError('filter', compiled.message);
  let count = 0;
  let read = 0;
  let before: string | undefined;
  for (;;) {
    const rows = await pageOfContacts(deps.store.reader, projectId, {
      limit: SCAN,
      before,
      audienceId: body.audience_id,
    });
    for (const c of rows.slice(0, SCAN))
      if (!c.pending && matches(compiled.compiled, contactValues(c, properties))) count++;
    read += Math.min(rows.length, SCAN);
    if (rows.length <= SCAN) return { count, complete: true };
    if (read >= COUNT_SCAN_LIMIT) return { count, complete: false };
    before = rows[SCAN - 1].id;
  }
}

export function segmentService(deps: SegmentDeps) {
  return {
    create: (
      projectId: string,
      body: { name: string; audience_id?: string | undefined; filter: string },
    ): Promise<Segment> =>
      // under the project's lock, so that the property it reads or the audience it uses is not deleted meanwhile
      deps.store.tx(async (trx) => {
        await lockRows(trx, 'projects', [projectId]);
        if (body.audience_id && !(await findAudience(trx, projectId, body.audience_id)))
          throw notFound(`audience ${body.audience_id}`);
        const compiled = compileFilter(body.filter, await listProperties(trx, projectId));
        if (!compiled.ok) throw validationError('filter', compiled.message);
        const now = deps.clock.now();
        const s: Segment = {
          id: newId('segment', now),
          projectId,
          name: body.name,
          audienceId: body.audience_id ?? null,
          filter: body.filter,
          compiled: compiled.compiled,
          roots: compiled.roots,
          createdAt: now,
        };
        await repo.insertSegment(trx, s);
        return s;
      }),
    get: (projectId: string, id: string) => existing(deps, projectId, id),
    list: async (projectId: string, limit: number, cursor: string | undefined): Promise<Page<Segment>> =>
      idPage(await repo.pageOfSegments(deps.store.knex, projectId, limit, cursor), limit),
    /** Deletes the segment and answers what it was. */
    delete: async (projectId: string, id: string): Promise<Segment> => {
      const s = await existing(deps, projectId, id);
      await deps.store.tx(async (trx) => {
        await lockRows(trx, 'projects', [projectId]);
        const broadcast = await broadcastUsing(trx, projectId, { segment: s.id });
        if (broadcast)
          throw apiError(
            'conflict',
            `broadcast ${broadcast.id} (${broadcast.name}) sends to the segment ${s.id}; cancel or change it first`,
          );
        await repo.deleteSegment(trx, s.id);
      });
      return s;
    },
    contacts: (projectId: string, id: string, limit: number, cursor: string | undefined) =>
      members(deps, projectId, id, limit, cursor),
    count: (projectId: string, body: { audience_id?: string | undefined; filter: string }) =>
      countMatching(deps, projectId, body),
  };
}

export type SegmentService = ReturnType<typeof segmentService>;
