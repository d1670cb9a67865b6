import type { Logger } from '../log/logger.js';
import type { Clock } from '../lib/time.js';
import type { Store } from '../store/store.js';
import type { GroupCommit } from '../store/group-commit.js';
import type { Email } from '../modules/sending/emails/email.js';
import { simulateAttempt, SIMULATED_RETRY_MS } from '../modules/sending/emails/simulate.js';
import type { Attempt, InstantAttempt } from '../mta/attempt.js';
import { QueueWorker } from '../mta/worker.js';
import type { Role } from './role.js';

export interface MtaRole extends Role {
  /** look at the queue now */
  wake(): void;
  worker: QueueWorker;
}

export interface MtaOptions {
  store: Store;
  writer: GroupCommit;
  clock: Clock;
  logger: Logger;
  testDomain: string;
  /** this process's node id (cluster.service.ts): the owner of the leases it takes */
  owner: string;
  retryDelaysMs: readonly number[];
  /** the SMTP path for live mail */
  attemptLive: Attempt;
  /** release resources of the live path (SMTP pools) */
  closeLive?: () => Promise<void>;
}

/** The outbound MTA: the queue worker with the simulation for test keys and SMTP for live keys. */
export async function startMta(o: MtaOptions): Promise<MtaRole> {
  // Test mail never leaves: its outcome is known at once and recorded as the row is claimed.
  const simulate: InstantAttempt = (email, row, recipients) =>
    email.environment === 'test' ? simulateAttempt(email, recipients, o.testDomain, row.attempts) : null;
  const worker = new QueueWorker({
    store: o.store,
    writer: o.writer,
    clock: o.clock,
    logger: o.logger,
    owner: o.owner,
    instant: simulate,
    attempt: o.attemptLive,
    retryDelaysMs: (email: Email) => (email.environment === 'test' ? SIMULATED_RETRY_MS : o.retryDelaysMs),
  });
  await worker.start();
  o.logger.info('MTA queue worker started');
  return {
    name: 'mta',
    worker,
    wake: () => worker.wake(),
    async stop() {
      await worker.stop();
      await o.closeLive?.();
    },
  };
}
