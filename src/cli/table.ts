/** A plain text table for humans; --json is the machine form. */
export function renderTable(rows: Array<Record<string, unknown>>, columns?: string[]): string {
  if (rows.length === 0) return '(none)\n';
  const cols = columns ?? Object.keys(rows[0]);
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cellText(r[c]).length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return (
    [line(cols.map((c) => c.toUpperCase())), ...rows.map((r) => line(cols.map((c) => cellText(r[c]))))].join('\n') +
    '\n'
  );
}

/** One object as "key  value" lines. */
export function renderObject(obj: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(obj).map((k) => k.length));
  return (
    Object.entries(obj)
      .map(([k, v]) => `${k.padEnd(width)}  ${cellText(v)}`)
      .join('\n') + '\n'
  );
}

/** A value as text: nothing as blank, objects and arrays as JSON, anything else (a primitive) as itself. */
function cellText(v: unknown): string {
  switch (typeof v) {
    case 'undefined':
      return '';
    case 'object':
      return v === null ? '' : JSON.stringify(v);
    case 'string':
      return v;
    case 'number':
    case 'bigint':
    case 'boolean':
    case 'symbol':
    case 'function':
      return String(v);
  }
}
