import type { Db } from '../../../store/db.js';
import { insertRowsIgnoring } from '../../../store/insert-rows.js';
import { prepared } from '../../../store/prepared.js';
import { answerKey, type IdempotencyRecord, type RecordedAnswer } from './idempotency.js';

interface Row {
  project_id: string;
  key: string;
  request_hash: string;
  state: string;
  response_status: number | null;
  response_body: string | null;
  created_at: number;
}

const COLUMNS = [
  'project_id',
  'key',
  'request_hash',
  'state',
  'response_status',
  'response_body',
  'created_at',
] as const;

// `state` is 'done' for every row written now. A row 'running' was a claim of an older version,
// made before its request was stored: it never holds an answer, and a retry takes its key.
const answerOf = (r: Row): RecordedAnswer | null =>
  r.state === 'done'
    ? { hash: r.request_hash, status: Number(r.response_status), body: JSON.parse(r.response_body!) as unknown }
    : null;

/** The answers recorded since `since` for these keys, by answerKey: one query for a batch. */
export async function answersFor(
  db: Db,
  keys: Array<{ projectId: string; key: string }>,
  since: number,
): Promise<Map<string, RecordedAnswer>> {
  const out = new Map<string, RecordedAnswer>();
  if (!keys.length) return out;
  const wanted = new Set(keys.map((k) => answerKey(k.projectId, k.key)));
  const rows = (await db('idempotency_keys')
    .select(COLUMNS)
    .whereIn('key', [...new Set(keys.map((k) => k.key))])
    .whereIn('project_id', [...new Set(keys.map((k) => k.projectId))])
    .andWhere('created_at', '>', since)) as Row[];
  for (const r of rows) {
    const answer = answerOf(r);
    if (answer && wanted.has(answerKey(r.project_id, r.key))) out.set(answerKey(r.project_id, r.key), answer);
  }
  return out;
}

// every keyed send asks once before it is accepted (SMTP submission keys every message by its Message-ID)
const answerRows = prepared<Row>(
  (db, key, projectId, since) =>
    db('idempotency_keys')
      .select(COLUMNS)
      .where('key', key as string)
      .andWhere('project_id', projectId as string)
      .andWhere('created_at', '>', since as number),
  3,
);

export async function findAnswer(
  db: Db,
  projectId: string,
  key: string,
  since: number,
): Promise<RecordedAnswer | null> {
  const row = (await answerRows(db, key, projectId, since))[0];
  return row ? answerOf(row) : null;
}

/**
 * Record answers in the transaction that stores what they answer. A row of
 * the same key that holds no answer any more (expired, or an older version's
 * claim) gives way; a live one is never overwritten: an answer another
 * process committed meanwhile keeps the key (the insert skips it, no error),
 * and the records that lost so are answered, for the batch to plan again.
 */
const dropDeadKey = prepared(
  (db, projectId, key, done, since) =>
    db('idempotency_keys')
      .where('project_id', projectId as string)
      .andWhere('key', key as string)
      .andWhere((w) => {
        w.whereNot('state', done as string).orWhere('created_at', '<=', since as number);
      })
      .delete(),
  4,
);

export async function recordAnswers(db: Db, records: IdempotencyRecord[], since: number): Promise<IdempotencyRecord[]> {
  for (const r of records) await dropDeadKey(db, r.projectId, r.key, 'done', since);
  if (!records.length) return [];
  // in one order, so that two nodes' batches wait for each other's keys rather than deadlock
  const ordered = [...records].sort((a, b) => compare(a.projectId, b.projectId) || compare(a.key, b.key));
  const inserted = await insertRowsIgnoring(
    db,
    'idempotency_keys',
    ordered.map((r) => ({
      project_id: r.projectId,
      key: r.key,
      request_hash: r.hash,
      state: 'done',
      response_status: r.status,
      response_body: JSON.stringify(r.body),
      created_at: r.createdAt,
    })),
    ['project_id', 'key'],
  );
  const won = new Set(inserted.map((r) => answerKey(String(r.project_id), String(r.key))));
  return records.filter((r) => !won.has(answerKey(r.projectId, r.key)));
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Takes back answers this transaction recorded (a batch planned again after a key race). */
export async function forgetAnswers(db: Db, records: IdempotencyRecord[]): Promise<void> {
  for (const r of records) await db('idempotency_keys').where({ project_id: r.projectId, key: r.key }).delete();
}

export async function deleteKeysOlderThan(db: Db, olderThan: number): Promise<number> {
  return db('idempotency_keys').where('created_at', '<', olderThan).delete();
}
