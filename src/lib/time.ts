export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** RFC 3339 UTC with milliseconds (CONTRACT §4). */
export function iso(ms: number): string;
export function iso(ms: number | null | undefined): string | null;
export function iso(ms: number | null | undefined): string | null {
  return ms == null ? null : new Date(ms).toISOString();
}
