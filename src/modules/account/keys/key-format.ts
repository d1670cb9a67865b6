import { createHash } from 'node:crypto';
import { randomBase62 } from '../../../lib/ids.js';
import type { KeyMode } from './scopes.js';

// CONTRACT §4: ph_live_ / ph_test_ + 40 base62 characters (~238 bits).
const KEY_PATTERN = /^ph_(live|test)_[A-Za-z0-9]{40}$/;

export interface NewKeySecret {
  key: string;
  hash: string;
  /** what lists show of the key: its mode part only, since no character of the secret is stored */
  prefix: string;
}

export function generateKeySecret(mode: KeyMode): NewKeySecret {
  const key = `ph_${mode}_${randomBase62(40)}`;
  return { key, hash: hashKey(key), prefix: `ph_${mode}_` };
}

/** The key is random and long, so a plain SHA-256 is enough: nothing to brute-force. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function looksLikeKey(text: string): boolean {
  return KEY_PATTERN.test(text);
}
