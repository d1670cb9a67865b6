import type { RecipientOutcome } from '../modules/sending/emails/lifecycle.js';
import type { Destination } from './smtp-pool.js';
import type { SendResult } from './smtp-sender.js';
import { stillOpen, type Admission, type Lane } from './shaping/lane.js';
import type { Shaper } from './shaping/shaper.js';

/**
 * One attempt's lane: the provider of the route's MX hosts seen from the source address the
 * attempt leaves from. Its destinations carry the lane (and the source address and its EHLO name),
 * so that the SMTP pool counts their connections together; each message asks it before it starts,
 * and tells it the replies after.
 */
export class AttemptLane {
  private constructor(
    private readonly shaper: Shaper,
    private readonly lane: Lane,
    readonly destinations: Destination[],
    /** broadcast mail: it waits behind the lane's held transactional mail */
    private readonly bulk: boolean,
  ) {}

  /**
   * The lane of an attempt of `n` messages: its provider, and its source IP from the project's pool
   * (`projectPool`; broadcast rows from the bulk pool). A hold when every address of the pool is
   * suspended by the provider or has sent its warm-up cap to it today.
   */
  static open(
    shaper: Shaper,
    destinations: Destination[],
    row: { route: string; bulk: boolean },
    projectPool: string | null,
    n: number,
  ): AttemptLane | Extract<Admission, { kind: 'hold' }> {
    // the most preferred MX host names the provider: the others are its backups
    const provider = shaper.table.of(destinations[0].servername ?? destinations[0].host);
    shaper.noteRoute(row.route, provider.name);
    const picked = shaper.source(projectPool, row.bulk, provider, n);
    if (picked.kind === 'hold') return picked;
    const source = picked.source;
    const lane = {
      key: `${provider.name}|${source?.address ?? ''}`,
      maxConnections: provider.limits.maxConnections,
      maxMessagesPerConnection: provider.limits.maxMessagesPerConnection,
    };
    return new AttemptLane(
      shaper,
      shaper.lane(provider, source?.address ?? ''),
      destinations.map((d) => ({
        ...d,
        lane,
        ...(source ? { localAddress: source.address, ehlo: source.ehlo } : {}),
      })),
      row.bulk,
    );
  }

  /** `key` names the message, the same when it comes back from the queue (it keeps its turn). */
  admit(key: string): Promise<Admission> {
    return this.shaper.admit(this.lane, key, this.bulk);
  }

  /** For SendRequest.mayStart: whether the lane still lets the message go once it has a connection. */
  mayStart(probe: boolean): () => boolean {
    return () => stillOpen(this.lane, probe);
  }

  /** A message withdrawn before it started: held like the messages behind it. */
  async withdrawn(key: string): Promise<Extract<Admission, { kind: 'hold' }>> {
    const again = await this.admit(key);
    // the lane reopened meanwhile (a probe answered): its turn comes at once
    return again.kind === 'hold' ? again : { kind: 'hold', until: Date.now(), reason: 'withdrawn', quiet: true };
  }

  /**
   * The recipient's outcome once the lane has read the transaction's replies: a reply that
   * throttled the provider leaves the recipient deferred until the suspension ends, whatever its
   * code said (never bounced for it).
   */
  outcome(res: SendResult, classified: RecipientOutcome, probe: boolean): RecipientOutcome {
    const { throttledUntil } = this.shaper.observe(this.lane, res.recipients, probe);
    if (throttledUntil === null || (classified.kind !== 'deferred' && classified.kind !== 'bounced')) return classified;
    return { kind: 'deferred', reply: classified.reply, mx: res.host, until: throttledUntil, wait: 'throttle' };
  }
}

/**
 * The outcomes of the recipients a hold stops: deferred with its reason when the provider is
 * suspended; left without an outcome when only their turn has not come (`heldUntil` then says
 * when the row is tried again).
 */
export function heldRecipients(
  hold: Extract<Admission, { kind: 'hold' }>,
  ids: string[],
  outcomes: Map<string, RecipientOutcome>,
): { heldUntil: number } {
  const wait = hold.warmup ? 'warmup' : 'throttle';
  if (!hold.quiet)
    for (const id of ids) outcomes.set(id, { kind: 'deferred', reply: hold.reason, until: hold.until, wait });
  return { heldUntil: hold.until };
}
