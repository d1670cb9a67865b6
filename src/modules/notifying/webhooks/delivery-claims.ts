import type { Lease } from '../../../store/lease.js';
import type { GroupCommit } from '../../../store/group-commit.js';
import type { InFlightRequests } from './in-flight.js';
import { claimDueDeliveries, type ClaimedDelivery } from './webhook-deliveries.repo.js';

/** What a claim takes for endpoints with nothing in flight: a starting window's worth, a few times over. */
const FRESH_ENDPOINT_SLOTS = 16;
/**
 * How often deliveries of endpoints with nothing in flight are looked for, besides after a fan-out:
 * that claim reads past the backlog of the endpoints in flight, so it does not run after every answer.
 */
const FRESH_CLAIM_MS = 200;
/** How many due rows an endpoint's claim reads for each it may take: an email's events are usually two or three. */
const READ_AHEAD = 2;

/**
 * Which due deliveries the dispatcher claims, and how. Each endpoint in
 * flight (or left with a backlog by its last claim) claims its own, as many
 * as its window has room for, through the index of its backlog; the other
 * endpoints' are looked for after a fan-out and every FRESH_CLAIM_MS. One
 * claim for all that passed over the pending deliveries of every full
 * endpoint read the whole backlog again after every answer: on PostgreSQL,
 * over a thousand rows per event delivered.
 */
export class DeliveryClaims {
  private freshClaimedAt = 0;
  /** endpoints with nothing in flight whose last claim took rows: claimed on their own next time */
  private readonly backlogged = new Set<string>();

  constructor(
    private readonly writer: GroupCommit,
    private readonly inFlight: InFlightRequests,
  ) {}

  /** New deliveries may be for endpoints not in flight: the next claim looks for them. */
  lookEverywhere(): void {
    this.freshClaimedAt = 0;
  }

  /**
   * At most `room` due deliveries, leased, each within its endpoint's window and none about an email
   * whose earlier event is on its way (in-flight.ts); what does not fit is left unleased.
   *
   * The claim does not wait for its fsync: a lease lost in a crash is one the restart drops anyway
   * (SQLite: dropDeliveryLeases; a PostgreSQL commit is durable when it returns), so the POST it
   * covers goes again either way, at least once. Waiting doubled the time from answer to next claim.
   */
  async take(now: number, room: number, lease: Lease): Promise<ClaimedDelivery[]> {
    const own = [...new Set([...this.inFlight.endpointIds(), ...this.backlogged])]
      .map((endpointId) => ({ endpointId, free: this.inFlight.roomOf(endpointId) }))
      .filter((e) => e.free > 0);
    const fresh = now - this.freshClaimedAt >= FRESH_CLAIM_MS;
    if (!own.length && !fresh) return [];
    if (fresh) this.freshClaimedAt = now;
    const pick = this.inFlight.picker(room);
    const { value } = await this.writer.runCommitted(async (trx) => {
      const out: ClaimedDelivery[] = [];
      for (const { endpointId, free } of own) {
        if (out.length >= room) break;
        let found = 0;
        const rows = await claimDueDeliveries(trx, {
          now,
          lease,
          // an email's later event waits for its earlier one: read past them to fill the window
          limit: READ_AHEAD * Math.min(free, room - out.length),
          endpointId,
          skipEmails: this.inFlight.emailsAt(endpointId),
          pick: (due) => ((found = due.length), pick(due)),
        });
        if (found) this.backlogged.add(endpointId);
        else this.backlogged.delete(endpointId);
        out.push(...rows);
      }
      if (fresh && out.length < room) {
        const rows = await claimDueDeliveries(trx, {
          now,
          lease,
          limit: Math.min(FRESH_ENDPOINT_SLOTS, room - out.length),
          skipEndpoints: [...new Set([...this.inFlight.endpointIds(), ...this.backlogged])],
          pick: (due) => {
            for (const d of due) this.backlogged.add(d.endpointId);
            return pick(due);
          },
        });
        out.push(...rows);
      }
      return out;
    });
    return value;
  }
}
