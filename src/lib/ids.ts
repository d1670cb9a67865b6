import { randomBytes, randomFillSync } from 'node:crypto';

// Crockford base32, lower-cased: sorts the same as the underlying numbers.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

let lastTime = -1;
let lastRandom: Uint8Array = new Uint8Array(10);

/**
 * A ULID-shaped id (48-bit millisecond time + 80 random bits, 26 chars).
 * Ids made by one process are strictly increasing, even within one
 * millisecond, so "newest first" is simply "id descending" (CONTRACT §4).
 */
export function timeOrderedId(now: number = Date.now()): string {
  if (now <= lastTime) {
    incrementInPlace(lastRandom);
    now = lastTime;
  } else {
    lastTime = now;
    lastRandom = freshRandom();
  }
  return encodeTime(now) + encodeRandom(lastRandom);
}

// Random bytes are drawn 4 KB at a time: one call into the CSPRNG per ~400 ids instead of per id
// (every request makes one for its Request-Id).
const pool = new Uint8Array(4096);
let poolAt = pool.length;

function freshRandom(): Uint8Array {
  if (poolAt + 10 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  poolAt += 10;
  return pool.slice(poolAt - 10, poolAt);
}

function incrementInPlace(bytes: Uint8Array): void {
  for (let i = bytes.length - 1; i >= 0; i--) {
    if (bytes[i] === 0xff) {
      bytes[i] = 0;
    } else {
      bytes[i] = bytes[i] + 1;
      return;
    }
  }
}

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

function encodeRandom(bytes: Uint8Array): string {
  // 80 bits = 16 base32 digits
  let out = '';
  let acc = 0;
  let bits = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(acc >> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  return out;
}

export const ID_PREFIX = {
  project: 'prj',
  key: 'key',
  email: 'msg',
  recipient: 'rcp',
  domain: 'dom',
  webhook: 'whe',
  event: 'evt',
  /** a webhook delivery: one event to one endpoint, its attempts */
  delivery: 'whd',
  /** a row of the outbound queue */
  queueRow: 'que',
  request: 'req',
  inbound: 'inb',
  contact: 'con',
  audience: 'aud',
  segment: 'seg',
  topic: 'top',
  /** a signup form (docs/forms.md) */
  form: 'frm',
  /** one submission of a signup form, waiting for its confirmation */
  formSubmission: 'fsb',
  broadcast: 'bro',
  /** a DMARC aggregate report a receiver sent about a domain */
  dmarcReport: 'dmr',
  /** an API request kept for GET /v1/logs */
  requestLog: 'log',
  /** a template's row (its public id is the one the client chose, unique per project) */
  template: 'tpl',
} as const;

export type IdKind = keyof typeof ID_PREFIX;

export function newId(kind: IdKind, now?: number): string {
  return `${ID_PREFIX[kind]}_${timeOrderedId(now)}`;
}

/**
 * The smallest id of this kind that can be made at `ms`: every id made
 * earlier sorts below it (ids by age: the bench's preload makes them, and
 * counts what is older than a moment, with it).
 */
export function firstIdAt(kind: IdKind, ms: number): string {
  return `${ID_PREFIX[kind]}_${encodeTime(Math.max(0, Math.floor(ms)))}${'0'.repeat(16)}`;
}

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Uniform base62 string: bytes >= 248 are rejected so every character is equally likely. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248) out += BASE62[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}
