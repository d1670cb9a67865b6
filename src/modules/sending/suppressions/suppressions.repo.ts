import type { Knex } from 'knex';
import { escapeLike, type Db } from '../../../store/db.js';
import { listParam, oneOf, prepared } from '../../../store/prepared.js';

import { findProject } from '../../account/projects/projects.repo.js';
import { suppressionKey, type SuppressingBounce, type Suppression, type SuppressionReason } from './suppression.js';

/**
 * In force at `now`: never expires, or not yet; or the address unsubscribed,
 * which outlives the end of a suppression that replaced it (it then stands
 * as `unsubscribe`, see `effective`).
 */
const inForce = (now: number) => (w: Knex.QueryBuilder) => {
  w.whereNull('expires_at').orWhere('expires_at', '>', now).orWhereNotNull('unsubscribed_at');
};

/** A row's reason and end at `now`: once it has ended, an unsubscription it carried is what is left. */
function effective(
  r: { reason: SuppressionReason; expires_at: number | string | null },
  now: number,
): { reason: SuppressionReason; expiresAt: number | null } {
  const ends = r.expires_at === null ? null : Number(r.expires_at);
  return ends === null || ends > now
    ? { reason: r.reason, expiresAt: ends }
    : { reason: 'unsubscribe', expiresAt: null };
}

// read in every claim's transaction: a prepared statement, the lists one parameter each
const suppressedIn = prepared<{
  project_id: string;
  address: string;
  reason: SuppressionReason;
  expires_at: number | null;
}>(
  (db, projects, addresses, now) =>
    db('suppressions')
      .select('project_id', 'address', 'reason', 'expires_at')
      .whereIn('project_id', oneOf(db, projects))
      .whereIn('address', oneOf(db, addresses))
      .andWhere(inForce(now as number)),
  3,
);

/**
 * The suppressed ones among (project, address) pairs at `now`, keyed by
 * suppressionKey, with their reasons: one query for a whole batch.
 */
export async function suppressedAmong(
  db: Db,
  pairs: Array<{ projectId: string; address: string }>,
  now: number,
): Promise<Map<string, SuppressionReason>> {
  const out = new Map<string, SuppressionReason>();
  if (!pairs.length) return out;
  const projects = [...new Set(pairs.map((p) => p.projectId))];
  const addresses = [...new Set(pairs.map((p) => p.address))];
  for (let i = 0; i < addresses.length; i += 5000) {
    const rows = await suppressedIn(db, listParam(projects), listParam(addresses.slice(i, i + 5000)), now);
    for (const r of rows) out.set(suppressionKey(r.project_id, r.address), effective(r, now).reason);
  }
  return out;
}

/** Add, keeping the first reason an address was suppressed for, unless that one has expired. */
export async function addSuppression(
  db: Db,
  s: Omit<Suppression, 'expiresAt'> & { expiresAt?: number | null },
): Promise<void> {
  const prior = (await db('suppressions')
    .select('reason', 'expires_at', 'unsubscribed_at')
    .where({ project_id: s.projectId, address: s.address })
    .first()) as
    | { reason: SuppressionReason; expires_at: number | string | null; unsubscribed_at: number | string | null }
    | undefined;
  const ended = prior && prior.expires_at !== null && Number(prior.expires_at) <= s.createdAt;
  // An unsubscription stops only some mail: a bounce, a complaint or the operator's suppression of
  // the same address stops all of it, and takes its place, keeping when the address unsubscribed.
  const outranked = prior?.reason === 'unsubscribe' && s.reason !== 'unsubscribe';
  if (prior && (ended || outranked))
    await db('suppressions').where({ project_id: s.projectId, address: s.address }).delete();
  const unsubscribedAt =
    s.reason === 'unsubscribe' ? s.createdAt : prior?.unsubscribed_at == null ? null : Number(prior.unsubscribed_at);
  await db('suppressions')
    .insert({
      project_id: s.projectId,
      address: s.address,
      reason: s.reason,
      email_id: s.emailId,
      created_at: s.createdAt,
      expires_at: s.expiresAt ?? null,
      unsubscribed_at: unsubscribedAt,
      bounce_reason: s.bounce?.reason ?? null,
      bounce_status: s.bounce?.status ?? null,
      // the server's words, as much as a person reads (some servers quote the whole message back)
      diagnostic: s.bounce?.diagnostic?.slice(0, 2000) ?? null,
    })
    .onConflict(['project_id', 'address'])
    .ignore();
}

/**
 * The address unsubscribes (one-click, the page or the mailto): a new
 * suppression with reason `unsubscribe`, or the mark on the suppression it
 * has, which it keeps when that one ends. False when it had unsubscribed
 * already.
 */
export async function markUnsubscribed(
  db: Db,
  s: { projectId: string; address: string; emailId: string; createdAt: number },
): Promise<boolean> {
  const prior = (await db('suppressions')
    .select('expires_at', 'unsubscribed_at')
    .where({ project_id: s.projectId, address: s.address })
    .first()) as { expires_at: number | string | null; unsubscribed_at: number | string | null } | undefined;
  if (prior?.unsubscribed_at != null) return false;
  if (!prior || (prior.expires_at !== null && Number(prior.expires_at) <= s.createdAt))
    await addSuppression(db, { ...s, reason: 'unsubscribe' });
  else
    await db('suppressions')
      .where({ project_id: s.projectId, address: s.address })
      .update({ unsubscribed_at: s.createdAt });
  return true;
}

const DAY_MS = 86_400_000;

/**
 * What live mail adds by itself (a hard bounce, a complaint): a bounce's
 * suppression ends after its project's bounce_suppression_days when set; a
 * complaint's never does.
 */
export async function suppressFromMail(
  db: Db,
  s: {
    projectId: string;
    address: string;
    reason: 'bounce' | 'complaint';
    bounce?: SuppressingBounce | undefined;
    emailId: string;
    createdAt: number;
  },
): Promise<void> {
  const days = s.reason === 'bounce' ? ((await findProject(db, s.projectId))?.bounceSuppressionDays ?? 0) : 0;
  await addSuppression(db, { ...s, expiresAt: days > 0 ? s.createdAt + days * DAY_MS : null });
}

export async function removeSuppression(db: Db, projectId: string, address: string): Promise<boolean> {
  return (await db('suppressions').where({ project_id: projectId, address }).delete()) > 0;
}

type SuppressionRow = {
  project_id: string;
  address: string;
  reason: SuppressionReason;
  email_id: string | null;
  created_at: number | string;
  expires_at: number | string | null;
  bounce_reason: string | null;
  bounce_status: string | null;
  diagnostic: string | null;
};

function fromRow(r: SuppressionRow, now: number): Suppression {
  const state = effective(r, now);
  return {
    projectId: r.project_id,
    address: r.address,
    ...state,
    bounce:
      state.reason === 'bounce' && r.bounce_reason
        ? { reason: r.bounce_reason, status: r.bounce_status, diagnostic: r.diagnostic }
        : null,
    emailId: r.email_id,
    createdAt: Number(r.created_at),
  };
}

const COLUMNS = [
  'project_id',
  'address',
  'reason',
  'email_id',
  'created_at',
  'expires_at',
  'bounce_reason',
  'bounce_status',
  'diagnostic',
];

/** The address's suppression in force at `now`, if any. */
export async function findSuppression(
  db: Db,
  projectId: string,
  address: string,
  now: number,
): Promise<Suppression | null> {
  const row = (await db('suppressions')
    .select(COLUMNS)
    .where({ project_id: projectId, address })
    .andWhere(inForce(now))
    .first()) as SuppressionRow | undefined;
  return row ? fromRow(row, now) : null;
}

/** Where a page starts: after this suppression in the order newest first, then by address. */
export interface SuppressionPosition {
  createdAt: number;
  address: string;
}

export interface SuppressionFilter {
  reason?: SuppressionReason | undefined;
  /** a part of the address, lower-cased */
  contains?: string | undefined;
}

/** One page, newest first; `limit + 1` rows are read so that the caller knows whether more follow. */
export async function pageOfSuppressions(
  db: Db,
  projectId: string,
  limit: number,
  after: SuppressionPosition | null,
  filter: SuppressionFilter,
  now: number,
): Promise<Suppression[]> {
  const q = db('suppressions').select(COLUMNS).where({ project_id: projectId }).andWhere(inForce(now));
  // an ended suppression that carried an unsubscription is listed as `unsubscribe`
  if (filter.reason === 'unsubscribe')
    q.andWhere((w) => {
      w.where('reason', 'unsubscribe').orWhere((e) => {
        e.whereNotNull('unsubscribed_at').andWhere('expires_at', '<=', now);
      });
    });
  else if (filter.reason)
    q.andWhere('reason', filter.reason).andWhere((w) => {
      w.whereNull('expires_at').orWhere('expires_at', '>', now);
    });
  // Addresses are stored lower-cased, so LIKE's case rules (SQLite folds ASCII, PostgreSQL does not) do not matter.
  if (filter.contains) q.andWhereRaw(`address like ? escape '\\'`, [`%${escapeLike(filter.contains)}%`]);
  if (after) {
    q.andWhere((w) => {
      w.where('created_at', '<', after.createdAt).orWhere((e) => {
        e.where('created_at', after.createdAt).andWhere('address', '>', after.address);
      });
    });
  }
  const rows = (await q
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'address', order: 'asc' },
    ])
    .limit(limit + 1)) as SuppressionRow[];
  return rows.map((r) => fromRow(r, now));
}

/** Every suppression of a project, newest first (the CLI's list). */
export async function listSuppressions(db: Db, projectId: string, now: number): Promise<Suppression[]> {
  const rows = (await db('suppressions')
    .select(COLUMNS)
    .where({ project_id: projectId })
    .andWhere(inForce(now))
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'address', order: 'asc' },
    ])) as SuppressionRow[];
  return rows.map((r) => fromRow(r, now));
}

/**
 * Deletes up to `limit` suppressions expired by `now`; returns how many. One
 * that carried an unsubscription becomes that unsubscription instead.
 */
export async function deleteExpiredSuppressions(db: Db, now: number, limit: number): Promise<number> {
  const expired = db('suppressions')
    .select('project_id', 'address', 'unsubscribed_at')
    .where('expires_at', '<=', now)
    .limit(limit);
  const rows = (await expired) as Array<{
    project_id: string;
    address: string;
    unsubscribed_at: number | string | null;
  }>;
  let n = 0;
  for (const r of rows) {
    const row = db('suppressions')
      .where({ project_id: r.project_id, address: r.address })
      .andWhere('expires_at', '<=', now);
    n +=
      r.unsubscribed_at === null
        ? await row.delete()
        : await row.update({ reason: 'unsubscribe', expires_at: null, created_at: Number(r.unsubscribed_at) });
  }
  return n;
}
