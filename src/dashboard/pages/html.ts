// HTML built from template literals: every interpolated value is escaped
// unless it is already Html (a fragment built the same way). Pure.
import { escapeHtml } from '../../lib/html.js';

export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** What a template interpolates: text, numbers and true (escaped), Html, nothing, or a list of these. */
type Interpolation = string | number | boolean | null | undefined | Html | readonly Interpolation[];

/** null, undefined and false render nothing; arrays render each item; Html is kept as it is. */
function render(v: Interpolation): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new Html(out);
}

/** A query string from the defined values only, e.g. for paging links that keep their filters. */
export function queryString(q: Record<string, string | undefined | null>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== null && v !== '') p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : '';
}
