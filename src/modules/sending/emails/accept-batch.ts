import type { Knex } from 'knex';
import { acceptBatchSize, acceptCommits } from '../../../log/metrics.js';
import { apiError, ApiError } from '../../../lib/errors.js';
import { isStorageRefusal } from '../../../lib/storage-full.js';
import type { Clock } from '../../../lib/time.js';
import type { Logger } from '../../../log/logger.js';
import type { Committed, Store } from '../../../store/store.js';
import type { GroupCommit } from '../../../store/group-commit.js';
import { planAccept, type AcceptPlan, type AcceptRequest, type AcceptSettings, type Accepted } from './accept-rules.js';
import { claimAnswers, readAcceptFacts, writeAcceptPlan } from './accept-transaction.js';
import { isWaiting } from './lifecycle.js';

/** A committed email whose commit is not known to be on disk: storing it again could queue it twice. */
export const notDurable = () => apiError('internal_error', 'the email could not be stored durably; retry it');

/** Takes an email into the queue; resolves once it is stored durably (AcceptQueue, or its relay to another thread). */
export interface Acceptor {
  submit(req: AcceptRequest): Promise<Accepted>;
}

/**
 * The MTA of this thread, when it runs here (mta/handoff.ts): in the
 * transaction that stores a batch, it may claim the batch's live mail due now
 * for its worker, rewriting the plan's emails and rows as claimed before they
 * are written. The claim is handed over once the commit is durable, and
 * given back if the transaction fails or its commit is not made durable.
 */
export interface AcceptHandoff {
  claim(plan: AcceptPlan, now: number): HandoffClaim | null;
}

export interface HandoffClaim {
  /** the commit that holds the claim is durable: the attempts start */
  handOver(): void;
  /** the claim was rolled back or may be lost: the worker's room comes back, its rows wait for recovery */
  giveBack(): void;
}

export interface AcceptOptions extends AcceptSettings {
  /** largest group of requests committed together */
  maxBatch?: number;
  /** limits.idempotency_ttl: how long a recorded answer is given again */
  idempotencyTtlMs?: number;
  /** told after every commit that left work in the queue, once it is durable */
  onStored?: () => void;
  /** the MTA of this thread, if any (looked up per batch: it starts after the accept queue) */
  handoff?: () => AcceptHandoff | null;
  /** the thread's group commit: accepted emails share commits with the queue's own writes */
  writer: GroupCommit;
}

/** A request waiting for its batch (wrapped, not spread: a spread adding fields takes V8's slow path). */
interface Pending {
  request: AcceptRequest;
  resolve(a: Committed<Accepted>): void;
  reject(err: unknown): void;
}

/** A batch's answer for each request, whether it left work in the queue, and what the MTA claimed of it. */
interface Stored {
  outcomes: Array<Accepted | ApiError>;
  queued: boolean;
}

const DAY_MS = 86_400_000;

/**
 * Group commit of accepted emails. Requests wait here until the current
 * transaction commits; then everything that arrived meanwhile is checked
 * (accept-rules.ts, over what this transaction reads) and stored in the next
 * single transaction (a few multi-row statements, one fsync). No request is
 * answered before the commit that holds it, so a 202 always survives a crash.
 */
export class AcceptQueue implements Acceptor {
  private waiting: Pending[] = [];
  private running = false;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly opts: AcceptOptions,
  ) {}

  submit(req: AcceptRequest): Promise<Accepted> {
    return this.submitCommitted(req).then(({ value, durable }) =>
      durable.then(
        () => value,
        () => Promise.reject(notDurable()),
      ),
    );
  }

  /**
   * Resolves at the commit that stores the email, before it is on disk: for
   * the background thread, which sends it to the API thread at once with its
   * commit number (roles/accept-relay.ts). Nobody may be told it is accepted
   * before `durable` resolves.
   */
  submitCommitted(req: AcceptRequest): Promise<Committed<Accepted>> {
    return new Promise<Committed<Accepted>>((resolve, reject) => {
      this.waiting.push({ request: req, resolve, reject });
      if (!this.running) {
        this.running = true;
        // the requests of this turn of the event loop join the batch
        setImmediate(() => this.flush());
      }
    });
  }

  /**
   * Each batch is one job of the thread's group commit: while a commit is under way, what comes
   * next waits for the following one, and a batch fails alone (its own savepoint).
   */
  private flush(): void {
    while (this.waiting.length) {
      const batch = this.waiting.splice(0, this.opts.maxBatch ?? 1000);
      const claim: ClaimHolder = { current: null };
      this.opts.writer
        .runCommitted((trx) => this.storeBatch(trx, requestsOf(batch), claim), liveProjectsOf(requestsOf(batch)))
        .then(
          (committed) => this.settle(batch, committed, claim),
          (e: unknown) => {
            giveBack(claim);
            // no room: alone, each would fail the same way (the store logs it, once a minute)
            if (isStorageRefusal(e)) for (const p of batch) p.reject(e);
            else void this.oneByOne(batch, e);
          },
        );
    }
    this.running = false;
  }

  /**
   * One request must not fail the others that shared its transaction: each
   * goes again alone, in a transaction of its own. (A key race with another
   * node is no failure: storeBatch plans the batch again.)
   */
  private async oneByOne(batch: Pending[], e: unknown): Promise<void> {
    this.logger.warn({ err: e, size: batch.length }, 'a batch of emails could not be stored; storing them one by one');
    for (const one of batch) {
      const claim: ClaimHolder = { current: null };
      try {
        this.settle([one], await this.store.commit((trx) => this.storeBatch(trx, [one.request], claim)), claim);
      } catch (err) {
        giveBack(claim);
        if (isStorageRefusal(err)) {
          one.reject(err);
          continue;
        }
        this.logger.error({ err }, 'could not store an email');
        one.reject(apiError('internal_error', 'the email could not be stored; nothing was queued'));
      }
    }
  }

  private settle(
    batch: Pending[],
    { value: { outcomes, queued }, durable, seq }: Committed<Stored>,
    claim: ClaimHolder,
  ): void {
    acceptCommits.inc();
    acceptBatchSize.observe(batch.length);
    durable.catch((e: unknown) =>
      this.logger.error({ err: e, size: batch.length }, 'a committed batch of emails could not be made durable'),
    );
    const taken = claim.current;
    claim.current = null;
    // nothing is sent of a commit that may be lost
    if (taken)
      durable.then(
        () => taken.handOver(),
        () => taken.giveBack(),
      );
    batch.forEach((p, i) => {
      const o = outcomes[i];
      if (o instanceof ApiError) p.reject(o);
      else p.resolve({ value: o, durable, seq });
    });
    if (queued)
      durable.then(
        () => this.opts.onStored?.(),
        () => undefined,
      );
  }

  /**
   * Requests stored with the caller's own writes in one job of the thread's
   * group commit (a savepoint of its own): the broadcast fan-out stores a
   * batch's emails and its progress so, and a crash keeps both or neither.
   * `work` gets the transaction and `store`, which stores requests there and
   * gives each one's outcome; what it throws rolls back all of it.
   */
  storeAlong<T>(
    work: (
      trx: Knex.Transaction,
      store: (requests: AcceptRequest[]) => Promise<Array<Accepted | ApiError>>,
    ) => Promise<T>,
    /** the projects `work` locks (GroupCommit.run) */
    projects?: string[],
  ): Promise<Committed<T>> {
    const claim: ClaimHolder = { current: null };
    let queued = false;
    return this.opts.writer
      .runCommitted((trx) => {
        queued = false;
        return work(trx, async (requests) => {
          const stored = await this.storeBatch(trx, requests, claim);
          queued ||= stored.queued;
          return stored.outcomes;
        });
      }, projects)
      .then(
        (committed) => {
          acceptCommits.inc();
          const taken = claim.current;
          claim.current = null;
          if (taken)
            committed.durable.then(
              () => taken.handOver(),
              () => taken.giveBack(),
            );
          if (queued)
            committed.durable.then(
              () => this.opts.onStored?.(),
              () => undefined,
            );
          return committed;
        },
        (e: unknown) => {
          giveBack(claim);
          throw e;
        },
      );
  }

  private async storeBatch(trx: Knex.Transaction, requests: AcceptRequest[], claim: ClaimHolder): Promise<Stored> {
    // a transaction run again (a retry of the store) claims afresh
    giveBack(claim);
    const now = this.clock.now();
    const since = now - (this.opts.idempotencyTtlMs ?? DAY_MS);
    let plan = planAccept(requests, await readAcceptFacts(trx, requests, now, since), this.opts);
    // A key race with another node is an ordinary path: the batch reads again and replays its answer.
    for (let round = 1; !(await claimAnswers(trx, plan, since)); round++) {
      if (round >= 3) throw new Error('Idempotency-Keys kept racing other nodes; the batch goes again');
      this.logger.debug({ size: requests.length }, 'an Idempotency-Key was answered by another node first; reading it');
      plan = planAccept(requests, await readAcceptFacts(trx, requests, now, since), this.opts);
    }
    claim.current = this.opts.handoff?.()?.claim(plan, now) ?? null;
    await writeAcceptPlan(trx, plan);
    return { outcomes: plan.outcomes, queued: plan.rows.some(isWaiting) };
  }
}

const requestsOf = (batch: Pending[]) => batch.map((p) => p.request);

/** The projects whose live usage a batch counts: readAcceptFacts locks their rows. */
const liveProjectsOf = (requests: AcceptRequest[]) => [
  ...new Set(requests.filter((r) => r.environment === 'live').map((r) => r.project.id)),
];

/** The claim the MTA made in the batch's current transaction, if any. */
interface ClaimHolder {
  current: HandoffClaim | null;
}

function giveBack(claim: ClaimHolder): void {
  claim.current?.giveBack();
  claim.current = null;
}
