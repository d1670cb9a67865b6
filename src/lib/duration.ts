const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export const DURATION_PATTERN = '^[0-9]+(\\.[0-9]+)?(ms|s|m|h|d)$';

/** '500ms', '30s', '5m', '2h', '3d' → milliseconds (CONTRACT §2). */
export function parseDuration(text: string): number {
  const m = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)$/.exec(text.trim());
  if (!m) throw new Error(`not a duration: "${text}" (use 500ms, 30s, 5m, 2h or 3d)`);
  return Math.round(Number(m[1]) * UNITS[m[2]]);
}
