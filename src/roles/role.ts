/** A running part of the appliance (API, MTA, listeners, jobs): started by main.ts, stopped in reverse order. */
export interface Role {
  readonly name: string;
  stop(): Promise<void>;
}
