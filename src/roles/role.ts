/** A running part of the appliance (API, MTA, listeners, jobs): started by start-roles.ts, stopped in reverse order. */
export interface Role {
  readonly name: string;
  stop(): Promise<void>;
}

/** The roles told of new work: the MTA (an email stored), the webhook dispatcher (an event), the broadcast fan-out (a broadcast sent). */
export type WakeRole = 'mta' | 'dispatcher' | 'broadcasts';
