import { apiError, ApiError, type ErrorCode } from '../lib/errors.js';
import { asBuffer } from '../lib/bytes.js';
import { isStorageFull, storageFull } from '../lib/storage-full.js';
import { notDurable, type AcceptQueue, type Acceptor } from '../modules/sending/emails/accept-batch.js';
import type { AcceptRequest, Accepted } from '../modules/sending/emails/accept-rules.js';
import type { Email } from '../modules/sending/emails/email.js';

/**
 * The accept group commit of `serve` runs on the background thread, which
 * owns the queue: the database then has one busy writer instead of two
 * taking turns (every turn handed over the write lock across threads and
 * emptied the other connection's page cache), and accepted emails share
 * commits with the queue's own writes. The API thread keeps HTTP, validation
 * and attachment downloads; what crosses over is the prepared email, and
 * back comes the stored one (without its bodies), the answer its
 * Idempotency-Key was given before, or the error. The stored
 * email comes back at COMMIT with its commit number, and the API thread
 * answers once the process's fsync thread reports that number durable
 * (shared-durability.ts): the fsync and the way back overlap, and the
 * background thread's busy event loop is not in between.
 */

/** seq: the commit to wait for before answering; null when the commit was already on disk. */
export type AcceptOutcome =
  | { ok: true; accepted: Accepted; seq: bigint | null }
  | {
      ok: false;
      error: { status: number; code: ErrorCode; message: string; field?: string; headers: Record<string, string> };
    };

/** The request as it crosses to the other thread (the attachments travel once, resolved). */
export function toWire(req: AcceptRequest): AcceptRequest {
  return {
    ...req,
    prepared: { ...req.prepared, attachments: [] },
    ...(req.more ? { more: req.more.map((p) => ({ ...p, attachments: [] })) } : {}),
  };
}

/** Structured cloning turns Buffers into Uint8Arrays; the store and the MIME builder want Buffers. */
export function fromWire(req: AcceptRequest): AcceptRequest {
  return { ...req, attachments: req.attachments.map((a) => ({ ...a, content: asBuffer(a.content) })) };
}

/**
 * The background thread's side: stores the email and tells its commit
 * number. Without a shared fsync thread (no number) it waits here until the
 * commit is on disk.
 */
export async function storeForRelay(
  queue: AcceptQueue,
  req: AcceptRequest,
): Promise<{ accepted: Accepted; seq: bigint | null }> {
  const { value, durable, seq } = await queue.submitCommitted(req);
  if (seq === null) await durable.catch(() => Promise.reject(notDurable()));
  return { accepted: value, seq };
}

export function outcomeOf(settled: PromiseSettledResult<{ accepted: Accepted; seq: bigint | null }>): AcceptOutcome {
  if (settled.status === 'fulfilled') {
    const { accepted, seq } = settled.value;
    // The API thread only presents the stored email, which shows no bodies: they stay here.
    const bare = (e: Email): Email => ({ ...e, html: null, text: null });
    return {
      ok: true,
      accepted: accepted.email
        ? { email: bare(accepted.email), replay: null, ...(accepted.batch ? { batch: accepted.batch.map(bare) } : {}) }
        : accepted,
      seq,
    };
  }
  const reason: unknown = settled.reason;
  const e =
    reason instanceof ApiError
      ? reason
      : isStorageFull(reason)
        ? storageFull()
        : apiError('internal_error', 'the email could not be stored; nothing was queued');
  return {
    ok: false,
    error: {
      status: e.status,
      code: e.code,
      message: e.message,
      ...(e.field ? { field: e.field } : {}),
      headers: e.headers,
    },
  };
}

export function settle(o: AcceptOutcome): Accepted {
  if (o.ok) return o.accepted;
  throw new ApiError(o.error.status, o.error.code, o.error.message, o.error.field, o.error.headers);
}

interface Waiting {
  request: AcceptRequest;
  resolve(a: Accepted): void;
  reject(e: unknown): void;
}

/**
 * Requests the API thread gathers before it sends them over, even in the
 * middle of a turn of its event loop. Under load the clients' requests come
 * in bursts (all 64 of the bench's clients get their answers from one commit
 * and send again at once) and one turn reads them all: sent as one message at
 * the end of the turn, the background thread idled while the API thread
 * parsed the burst, and the API thread idled while the background thread
 * stored it. Sent in parts, storing the first part overlaps parsing the rest;
 * the other side still merges whatever waits into one commit. Measured with
 * `npm run bench` (accepts, test key, 64 clients; 8 s runs, interleaved): one
 * message per turn averaged ~4,000/s over 13 runs and parts of 32 ~4,560/s
 * over 14, with the appliance using ~1.45 cores instead of ~1.17. Measured
 * on a warm process (after the bench's warm-up), parts of 16 beat parts of 32
 * in 7 of 9 interleaved pairs, by 6–8% where both runs of a pair took the
 * same CPU time per request, with the same p99 (25–37 ms against 28–38);
 * parts of 8 were no better than 32 (4 rounds), and 12 and 24 could not be
 * told from 16 (3 rounds).
 */
export const MAX_REQUESTS_PER_MESSAGE = 16;

/**
 * The API thread's side: the requests of one turn of the event loop go over
 * together, in messages of at most MAX_REQUESTS_PER_MESSAGE.
 */
export class RemoteAcceptor implements Acceptor {
  private nextId = 1;
  private batch: Waiting[] | null = null;
  private readonly sent = new Map<number, Waiting[]>();
  private closed: string | null = null;

  constructor(
    private readonly post: (id: number, requests: AcceptRequest[]) => void,
    /** resolves once the given commit of the process is on disk (shared-durability.ts) */
    private readonly whenDurable: (seq: bigint) => Promise<void>,
  ) {}

  submit(request: AcceptRequest): Promise<Accepted> {
    if (this.closed) return Promise.reject(apiError('service_unavailable', this.closed));
    return new Promise<Accepted>((resolve, reject) => {
      if (!this.batch) {
        this.batch = [];
        setImmediate(() => this.flush());
      }
      this.batch.push({ request, resolve, reject });
      if (this.batch.length >= MAX_REQUESTS_PER_MESSAGE) this.flush();
    });
  }

  private flush(): void {
    const batch = this.batch;
    // sent already, because it was full
    if (!batch) return;
    this.batch = null;
    const id = this.nextId++;
    this.sent.set(id, batch);
    try {
      this.post(
        id,
        batch.map((w) => toWire(w.request)),
      );
    } catch (e) {
      this.sent.delete(id);
      for (const w of batch) w.reject(e);
    }
  }

  /**
   * The other thread's answer to message `id`, one outcome per request, in
   * order. Refusals are answered at once; stored emails once the last commit
   * among them is on disk (one wait for the message: they share a commit
   * but when one was retried alone).
   */
  answered(id: number, outcomes: AcceptOutcome[]): void {
    const batch = this.sent.get(id);
    if (!batch) return;
    this.sent.delete(id);
    const stored: Array<[Waiting, Accepted]> = [];
    let last: bigint | null = null;
    batch.forEach((w, i) => {
      const o = outcomes[i];
      try {
        stored.push([w, settle(o)]);
        if (o.ok && o.seq !== null && (last === null || o.seq > last)) last = o.seq;
      } catch (e) {
        w.reject(e);
      }
    });
    if (!stored.length) return;
    const onDisk = last === null ? Promise.resolve() : this.whenDurable(last);
    onDisk.then(
      () => {
        for (const [w, accepted] of stored) w.resolve(accepted);
      },
      () => {
        for (const [w] of stored) w.reject(notDurable());
      },
    );
  }

  /** The other thread is gone: whatever it had not answered may or may not be stored. */
  close(reason: string): void {
    this.closed = reason;
    const error = apiError(
      'internal_error',
      'the appliance stopped while storing the email; it may or may not have been queued',
    );
    for (const batch of [...this.sent.values(), ...(this.batch ? [this.batch] : [])])
      for (const w of batch) w.reject(error);
    this.sent.clear();
    this.batch = null;
  }
}
