import { createHash } from 'node:crypto';
import { apiError, validationError } from '../../../lib/errors.js';

/**
 * Idempotency-Key (interface §4.1, §8), the parts without I/O. The answer to
 * a keyed send is recorded in the transaction that stores the email
 * (idempotency.repo.ts): there is no claim before it, so a request cut off by
 * a crash leaves nothing behind and a prompt retry is accepted. A retry that
 * arrives while the first request is still running here is refused
 * (KeysInFlight); one that reaches another process meanwhile is given the
 * first one's answer once that commits (the key's unique index decides).
 */

/** The answer a request with an Idempotency-Key was given: what a retry with the same key is given again. */
export interface RecordedAnswer {
  /** requestHash of the body it answered */
  hash: string;
  status: number;
  body: unknown;
}

export interface IdempotencyRecord extends RecordedAnswer {
  projectId: string;
  key: string;
  createdAt: number;
}

/** Keys are per project. */
export const answerKey = (projectId: string, key: string) => `${projectId}\u0000${key}`;

/** interface §8: at most 255 printable characters. */
export function checkIdempotencyKey(key: string): void {
  if (key.length < 1 || key.length > 255) throw validationError('Idempotency-Key', 'must be 1 to 255 characters');
  if (!/^[\x20-\x7e]+$/.test(key))
    throw validationError('Idempotency-Key', 'must contain printable ASCII characters only');
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

export const differentBody = () =>
  apiError('idempotency_conflict', 'this Idempotency-Key was used with a different request body');

/** The keyed requests this process is answering now: a second one with the same key waits for nobody, it is refused. */
export class KeysInFlight {
  private readonly running = new Map<string, string>();

  /** Takes the key for a request with this body hash; the returned function gives it back. */
  enter(projectId: string, key: string, hash: string): () => void {
    const k = answerKey(projectId, key);
    const other = this.running.get(k);
    if (other !== undefined)
      throw other === hash
        ? apiError(
            'idempotency_conflict',
            'a request with this Idempotency-Key is still being processed',
            {},
            'in_flight',
          )
        : differentBody();
    this.running.set(k, hash);
    return () => {
      if (this.running.get(k) === hash) this.running.delete(k);
    };
  }
}
