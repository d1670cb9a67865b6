import type { Logger } from '../log/logger.js';
import { startSigningThread, type MessageSigner } from '../mta/signing-pool.js';
import type { Role } from './role.js';

/** MIME building and DKIM signing on a thread of their own (mta/signing-pool.ts); started before the MTA, stopped after it. */
export function startSigning(logger: Logger): Role & { signer: MessageSigner } {
  const signer = startSigningThread(logger);
  return { name: 'signing', signer, stop: () => signer.close() };
}
