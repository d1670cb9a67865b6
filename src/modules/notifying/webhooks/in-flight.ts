import type { EndpointWindows } from './endpoint-windows.js';

// The dispatcher's requests in flight, and which claimed deliveries may join them (no I/O).

/** What the accounting needs of a delivery: its endpoint, and the email its event is about (null: none). */
interface Routed {
  id: string;
  endpointId: string;
  emailId: string | null;
}

/**
 * Requests in flight per endpoint, each endpoint within its window
 * (endpoint-windows.ts), and the emails whose events are on their way to
 * each endpoint: one email's events reach an endpoint one at a time, in order.
 */
export class InFlightRequests {
  private readonly perEndpoint = new Map<string, number>();
  /** endpoint|email of the requests in flight */
  private readonly emails = new Set<string>();

  constructor(private readonly windows: EndpointWindows) {}

  /** the endpoints with requests in flight */
  endpointIds(): string[] {
    return [...this.perEndpoint.keys()];
  }

  /** how many more requests `endpointId` may have in flight now (its window less those in flight) */
  roomOf(endpointId: string): number {
    return Math.max(0, this.windows.limitOf(endpointId) - (this.perEndpoint.get(endpointId) ?? 0));
  }

  /** the emails whose events are on their way to `endpointId`: a claim for it leaves their later events */
  emailsAt(endpointId: string): string[] {
    const prefix = `${endpointId}|`;
    return [...this.emails].filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
  }

  /**
   * A claim's choice among the due deliveries it finds (oldest first), at most `room` in all over
   * every call: within their endpoint's window, and none while an earlier event about the same email
   * is on its way to that endpoint or taken before it. What it leaves is not leased, so nothing has
   * to be given back; a finished request wakes the dispatcher for it.
   */
  picker(room: number): <T extends Routed>(found: T[]) => T[] {
    const counts = new Map(this.perEndpoint);
    const emails = new Set(this.emails);
    let taken = 0;
    return (found) =>
      found.filter((d) => {
        const n = counts.get(d.endpointId) ?? 0;
        const email = emailAtEndpoint(d);
        if (n >= this.windows.limitOf(d.endpointId) || taken >= room || (email !== null && emails.has(email)))
          return false;
        counts.set(d.endpointId, n + 1);
        if (email !== null) emails.add(email);
        taken++;
        return true;
      });
  }

  add(d: Routed): void {
    this.perEndpoint.set(d.endpointId, (this.perEndpoint.get(d.endpointId) ?? 0) + 1);
    const email = emailAtEndpoint(d);
    if (email !== null) this.emails.add(email);
  }

  remove(d: Routed): void {
    const n = (this.perEndpoint.get(d.endpointId) ?? 1) - 1;
    if (n <= 0) this.perEndpoint.delete(d.endpointId);
    else this.perEndpoint.set(d.endpointId, n);
    const email = emailAtEndpoint(d);
    if (email !== null) this.emails.delete(email);
  }
}

/** The key that keeps one email's events to one endpoint in order; null for an event about no email. */
function emailAtEndpoint(d: { endpointId: string; emailId: string | null }): string | null {
  return d.emailId === null ? null : `${d.endpointId}|${d.emailId}`;
}
