import { BOUNCE_REASONS, REASONS } from './reasons.js';

/** Markdown's table cell: a `|` would end it. */
const cell = (text: string) => text.replace(/\|/g, '\\|');

/**
 * docs/bounces.md's reason table, written from reasons.ts by `npm run docs` between its
 * `<!-- reasons:start -->` and `<!-- reasons:end -->` marks (a guardrail test holds them equal).
 */
export function reasonsTable(): string {
  const rows = BOUNCE_REASONS.map((name) => {
    const r = REASONS[name];
    const suppresses = r.hard ? 'yes' : r.repeatable ? 'if the project says so (repeatable)' : 'no';
    return `| \`${name}\` | ${cell(r.meaning)} | ${r.hard ? 'hard' : 'soft'} | ${suppresses} | \`${cell(r.examples[0] ?? '')}\` |`;
  });
  return ['| reason | meaning | hard/soft | suppresses | for example |', '|---|---|---|---|---|', ...rows].join('\n');
}

const START = '<!-- reasons:start -->';
const END = '<!-- reasons:end -->';

/** The document with the table between its marks replaced by today's. */
export function withReasonsTable(doc: string): string {
  const from = doc.indexOf(START);
  const to = doc.indexOf(END);
  if (from < 0 || to < from) throw new Error(`docs/bounces.md has no ${START} … ${END}`);
  return `${doc.slice(0, from + START.length)}\n${reasonsTable()}\n${doc.slice(to)}`;
}
