/** UTC periods of the sending limits: 'd:2026-11-22', 'm:2026-11'. */
export function periodsOf(now: number): { day: string; month: string } {
  const iso = new Date(now).toISOString();
  return { day: `d:${iso.slice(0, 10)}`, month: `m:${iso.slice(0, 7)}` };
}

/** The UTC month of address verifications (limits.verifications): 'v:2026-11'. */
export function verifyPeriod(now: number): string {
  return `v:${new Date(now).toISOString().slice(0, 7)}`;
}

/** The counter of a period's broadcast recipients (they count in the period's own too): 'bd:2026-11-22', 'bm:2026-11'. */
export const broadcastPeriod = (period: string) => `b${period}`;
