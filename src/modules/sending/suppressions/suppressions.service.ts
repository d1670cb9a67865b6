import { notFound, validationError } from '../../../lib/errors.js';
import { parseAddress } from '../../../lib/address.js';
import type { Clock } from '../../../lib/time.js';
import type { Store } from '../../../store/store.js';
import { findProject } from '../../account/projects/projects.repo.js';
import type { Suppression, SuppressionReason } from './suppression.js';
import {
  addSuppression,
  deleteExpiredSuppressions,
  findSuppression,
  listSuppressions,
  pageOfSuppressions,
  removeSuppression,
  type SuppressionFilter,
  type SuppressionPosition,
} from './suppressions.repo.js';
import type { Page } from '../../../lib/page.js';
import { deleteOldSoftBounces } from './soft-bounces.repo.js';

// The one way suppressions are listed, added and removed by hand: the
// /v1/suppressions routes and `posthorn suppression` both call it. The
// automatic ones (a Permanent bounce, a complaint) are written by the state
// change that causes them, in its transaction, through the same
// addSuppression (first reason kept, address as the accept compares it).

export interface SuppressionDeps {
  store: Store;
  clock: Clock;
}

/** Addresses are kept as the accept compares them: the bare address, lower-cased, its domain an A-label. */
function addressOf(input: string, field: string): string {
  const parsed = parseAddress(input);
  if (!parsed.ok) throw validationError(field, parsed.reason);
  return parsed.value.address.toLowerCase();
}

async function existingProject(deps: SuppressionDeps, projectId: string): Promise<void> {
  if (!(await findProject(deps.store.reader, projectId))) throw notFound(`project ${projectId}`);
}

/**
 * Suppress an address: the project sends nothing more to it. An address
 * already suppressed keeps its first reason and date (`created` false), so a
 * client that retries, or imports a list twice, changes nothing.
 */
export async function suppressAddress(
  deps: SuppressionDeps,
  projectId: string,
  input: string,
  reason: SuppressionReason = 'manual',
  field = 'email',
  expiresAt: number | null = null,
): Promise<{ suppression: Suppression; created: boolean }> {
  const address = addressOf(input, field);
  await existingProject(deps, projectId);
  const now = deps.clock.now();
  if (expiresAt !== null && expiresAt <= now) throw validationError('expires_at', 'must be in the future');
  const s: Suppression = { projectId, address, reason, emailId: null, createdAt: now, expiresAt };
  return deps.store.tx(async (trx) => {
    const before = await findSuppression(trx, projectId, address, now);
    // an unsubscription gives way to a suppression of all mail (suppressions.repo.ts addSuppression)
    if (before && !(before.reason === 'unsubscribe' && s.reason !== 'unsubscribe'))
      return { suppression: before, created: false };
    await addSuppression(trx, s);
    return { suppression: s, created: true };
  });
}

export async function listSuppressed(deps: SuppressionDeps, projectId: string): Promise<Suppression[]> {
  await existingProject(deps, projectId);
  return listSuppressions(deps.store.reader, projectId, deps.clock.now());
}

/** One page of a project's suppressions, newest first; the cursor is where the next page starts. */
export async function pageOfSuppressed(
  deps: SuppressionDeps,
  projectId: string,
  opts: { limit: number; cursor?: string | undefined } & SuppressionFilter,
): Promise<Page<Suppression>> {
  const after = opts.cursor === undefined ? null : decodeCursor(opts.cursor);
  const rows = await pageOfSuppressions(
    deps.store.reader,
    projectId,
    opts.limit,
    after,
    { reason: opts.reason, contains: opts.contains?.toLowerCase() },
    deps.clock.now(),
  );
  const items = rows.slice(0, opts.limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > opts.limit && last ? encodeCursor(last) : null };
}

/** Removes the suppression and answers what it was. */
export async function unsuppressAddress(deps: SuppressionDeps, projectId: string, input: string): Promise<Suppression> {
  // an address stored before today's rules must stay removable, even if it no longer parses
  const parsed = parseAddress(input);
  const address = parsed.ok ? parsed.value.address.toLowerCase() : input.trim().toLowerCase();
  return deps.store.tx(async (trx) => {
    const s = await findSuppression(trx, projectId, address, deps.clock.now());
    if (!s || !(await removeSuppression(trx, projectId, address))) throw notFound(`suppression of ${address}`);
    return s;
  });
}

// An opaque cursor: the position of the page's last suppression.
export function encodeCursor(s: SuppressionPosition): string {
  return Buffer.from(`${s.createdAt}:${s.address}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): SuppressionPosition {
  const m = /^(\d{1,16}):(.+)$/s.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw validationError('cursor', 'is not a next_cursor this list gave');
  return { createdAt: Number(m[1]), address: m[2] };
}

export function suppressionService(deps: SuppressionDeps) {
  return {
    list: (projectId: string, opts: Parameters<typeof pageOfSuppressed>[2]) => pageOfSuppressed(deps, projectId, opts),
    add: (projectId: string, email: string, reason?: SuppressionReason, expiresAt?: number | null) =>
      suppressAddress(deps, projectId, email, reason, 'email', expiresAt ?? null),
    /** The suppressions-prune job: expired ones deleted, 500 to a transaction; soft bounces no window counts any more. */
    async pruneExpired(): Promise<number> {
      await deps.store.tx((trx) => deleteOldSoftBounces(trx, deps.clock.now()));
      let total = 0;
      for (;;) {
        const n = await deps.store.tx((trx) => deleteExpiredSuppressions(trx, deps.clock.now(), 500));
        total += n;
        if (n < 500) return total;
      }
    },
    remove: (projectId: string, email: string) => unsuppressAddress(deps, projectId, email),
  };
}

export type SuppressionService = ReturnType<typeof suppressionService>;
