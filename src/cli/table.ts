/** A plain text table for humans; --json is the machine form. */
export function renderTable(rows: Array<Record<string, unknown>>, columns?: string[]): string {
  if (rows.length === 0) return '(none)\n';
  const cols = columns ?? Object.keys(rows[0]!);
  const cell = (v: unknown) => (v == null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return (
    [line(cols.map((c) => c.toUpperCase())), ...rows.map((r) => line(cols.map((c) => cell(r[c]))))].join('\n') + '\n'
  );
}

/** One object as "key  value" lines. */
export function renderObject(obj: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(obj).map((k) => k.length));
  return (
    Object.entries(obj)
      .map(([k, v]) => `${k.padEnd(width)}  ${v == null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
      .join('\n') + '\n'
  );
}
