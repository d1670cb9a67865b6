import { createHash } from 'node:crypto';
import { apiError, validationError } from '../../lib/errors.js';
import { isUniqueViolation, type Db, type Store } from '../../store/store.js';

/**
 * A claim still `running` after this long belongs to a request that can no
 * longer be running: its process died between the claim and the commit (the
 * slowest request downloads 10 attachments of 30 s each). Nothing was stored
 * for it, so a retry may take the key over instead of waiting out the TTL.
 */
export const ABANDONED_AFTER_MS = 6 * 60_000;

export type IdempotencyStart = { kind: 'new' } | { kind: 'replay'; status: number; body: unknown };

/** interface §8: at most 255 printable characters. */
export function checkIdempotencyKey(key: string): void {
  if (key.length < 1 || key.length > 255) throw validationError('Idempotency-Key', 'must be 1 to 255 characters');
  if (!/^[\x20-\x7e]+$/.test(key)) throw validationError('Idempotency-Key', 'must contain printable ASCII characters only');
}

/** The same request means the same JSON value, whatever the key order or spacing. */
export function requestHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/**
 * Claim an Idempotency-Key for a request, or find what it was answered
 * before. The claim is a committed row, so that a retry arriving while the
 * first request still runs — on this process or another — is refused
 * instead of sending twice.
 */
export async function beginIdempotent(store: Store, projectId: string, key: string, hash: string, now: number, ttlMs: number): Promise<IdempotencyStart> {
  try {
    return await claim(store, projectId, key, hash, now, ttlMs);
  } catch (e) {
    // Two first requests raced for the key and the other one's row won.
    if (isUniqueViolation(e)) throw apiError('idempotency_conflict', 'a request with this Idempotency-Key is still being processed');
    throw e;
  }
}

function claim(store: Store, projectId: string, key: string, hash: string, now: number, ttlMs: number): Promise<IdempotencyStart> {
  return store.tx(async (trx) => {
    const row = (await trx('idempotency_keys').select('request_hash', 'state', 'response_status', 'response_body', 'created_at').where({ project_id: projectId, key }).first()) as
      | { request_hash: string; state: string; response_status: number | null; response_body: string | null; created_at: number }
      | undefined;
    const abandoned = row?.state === 'running' && Number(row.created_at) <= now - ABANDONED_AFTER_MS;
    if (row && Number(row.created_at) > now - ttlMs && !abandoned) {
      if (row.request_hash !== hash) throw apiError('idempotency_conflict', 'this Idempotency-Key was used with a different request body');
      if (row.state !== 'done') throw apiError('idempotency_conflict', 'a request with this Idempotency-Key is still being processed');
      return { kind: 'replay', status: Number(row.response_status), body: JSON.parse(row.response_body!) as unknown };
    }
    if (row) await trx('idempotency_keys').where({ project_id: projectId, key }).delete();
    await trx('idempotency_keys').insert({ project_id: projectId, key, request_hash: hash, state: 'running', response_status: null, response_body: null, created_at: now });
    return { kind: 'new' };
  });
}

/** Record the answer; runs in the transaction that stores the email. */
export async function finishIdempotent(db: Db, projectId: string, key: string, status: number, body: unknown): Promise<void> {
  await db('idempotency_keys').where({ project_id: projectId, key }).update({ state: 'done', response_status: status, response_body: JSON.stringify(body) });
}

/** The request failed before anything was stored: the key is free for a corrected retry. */
export async function abandonIdempotent(store: Store, projectId: string, key: string): Promise<void> {
  await store.tx((trx) => trx('idempotency_keys').where({ project_id: projectId, key, state: 'running' }).delete());
}

export async function purgeIdempotencyKeys(store: Store, olderThan: number): Promise<number> {
  return store.tx((trx) => trx('idempotency_keys').where('created_at', '<', olderThan).delete());
}
