import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import { DKIM_SELECTORS } from './records.js';
import type { DomainKey } from './domain-keys.repo.js';
import type { KeyState } from './dkim-rotation.js';

const generate = promisify(generateKeyPair);

/**
 * Three RSA-2048 key pairs, one per selector, the first one signing: a key
 * can later be replaced behind a selector the domain does not sign with, and
 * switched to without the customer touching DNS (dkim-rotation.ts).
 * RFC 8301: RSA keys of at least 1024 bits, 2048 recommended.
 */
export async function generateDomainKeys(now: number): Promise<DomainKey[]> {
  return Promise.all(
    DKIM_SELECTORS.map((selector, i) => generateDomainKey(selector, i === 0 ? 'active' : 'standby', now)),
  );
}

export async function generateDomainKey(selector: string, state: KeyState, now: number): Promise<DomainKey> {
  const { privateKey, publicKey } = await generate('rsa', { modulusLength: 2048 });
  return {
    selector,
    state,
    publishedAt: now,
    retireAt: null,
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
  };
}
