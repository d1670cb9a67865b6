import { createPrivateKey, type KeyObject } from 'node:crypto';
import { buildMime, type MimeInput } from './build-mime.js';
import { createDkimSigner } from './dkim.js';

/** What a signed message is made of: plain data, so that it can be handed to another thread. */
export interface SignedMessageInput {
  mime: Omit<MimeInput, 'date'> & { date: number };
  dkim: {
    domainName: string;
    selector: string;
    /** identifies the key, so that its PEM is parsed once */
    keyId: string;
    privateKeyPem: string;
  };
}

/**
 * MIME (nodemailer's composer) then DKIM, as one pure step. A parsed
 * KeyObject signs several times faster than a PEM string parsed at every
 * signature, so the parsed keys are kept by id. `rsa`: where the signature
 * is computed (dkim.ts DkimOptions.rsa).
 */
export function signedMessageBuilder(rsa: 'pool' | 'here' = 'pool'): (input: SignedMessageInput) => Promise<Buffer> {
  const keys = new Map<string, KeyObject>();
  return async ({ mime, dkim }) => {
    let key = keys.get(dkim.keyId);
    if (!key) {
      key = createPrivateKey(dkim.privateKeyPem);
      keys.set(dkim.keyId, key);
    }
    const raw = await buildMime({ ...mime, date: new Date(mime.date) });
    return createDkimSigner({ domainName: dkim.domainName, selector: dkim.selector, privateKey: key, rsa })(raw);
  };
}
