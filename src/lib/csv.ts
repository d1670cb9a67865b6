// CSV (RFC 4180) for contact imports and exports. Pure.

/**
 * The rows of a CSV text: fields split on commas, a field in double quotes
 * may hold commas, line breaks and doubled quotes; CRLF or LF ends a row; a
 * leading BOM is dropped; a blank line is no row. Each row comes with its
 * line number (1-based) for error reports.
 */
export function parseCsv(text: string): Array<{ line: number; fields: string[] }> {
  const rows: Array<{ line: number; fields: string[] }> = [];
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  while (i < text.length) {
    const start = line;
    const fields: string[] = [];
    for (;;) {
      let field = '';
      if (text[i] === '"') {
        i++;
        for (;;) {
          const q = text.indexOf('"', i);
          if (q < 0) throw new Error(`line ${start}: a quoted field is never closed`);
          field += text.slice(i, q);
          line += countLines(text, i, q);
          i = q + 1;
          if (text[i] !== '"') break;
          field += '"';
          i++;
        }
      } else {
        let j = i;
        while (j < text.length && text[j] !== ',' && text[j] !== '\n' && text[j] !== '\r') j++;
        field = text.slice(i, j);
        i = j;
      }
      fields.push(field);
      if (text[i] === ',') {
        i++;
        continue;
      }
      break;
    }
    if (text[i] === '\r') i++;
    if (text[i] === '\n') i++;
    else if (i < text.length) throw new Error(`line ${line}: text after a closing quote`);
    line++;
    if (!(fields.length === 1 && fields[0] === '')) rows.push({ line: start, fields });
  }
  return rows;
}

function countLines(text: string, from: number, to: number): number {
  let n = 0;
  for (let k = from; k < to; k++) if (text.charCodeAt(k) === 10) n++;
  return n;
}

/** One field as CSV writes it: quoted when it holds a comma, a quote or a line break (or starts with a formula sign). */
export function csvField(v: string): string {
  // a leading = + - @ makes spreadsheets run the cell as a formula (CSV injection): quote and prefix it
  // (a plain number such as -5 is left as it is: it runs nothing, and reads back as a number)
  const safe = /^[=+\-@\t\r]/.test(v) && !/^-?\d+(\.\d+)?$/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(safe) || safe !== v ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export const csvRow = (fields: string[]) => fields.map(csvField).join(',') + '\r\n';
