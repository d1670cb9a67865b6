import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import { DKIM_SELECTORS } from './records.js';
import type { DomainKey } from './domains.repo.js';

const generate = promisify(generateKeyPair);

/**
 * Three RSA-2048 key pairs, one per selector, so that a key can be replaced
 * behind an unused selector and switched to without the customer touching DNS.
 * RFC 8301: RSA keys of at least 1024 bits, 2048 recommended.
 */
export async function generateDomainKeys(): Promise<DomainKey[]> {
  return Promise.all(
    DKIM_SELECTORS.map(async (selector) => {
      const { privateKey, publicKey } = await generate('rsa', { modulusLength: 2048 });
      return {
        selector,
        privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        publicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
      };
    }),
  );
}
