// The README's examples as the README test runs them: its fenced blocks,
// each shell block with the output shown after it, and the check that a
// command printed what the README shows. No I/O here.

export interface ReadmeExample {
  /** 1-based line of the block's opening fence */
  line: number;
  /** the commands, as printed */
  script: string;
  /** the output shown next to it (the fenced ```json or ```text block right after it), if any */
  shown: string | null;
  /** a command that runs until Ctrl-C (its block says so): started, then checked after the blocks that follow */
  background: boolean;
}

/**
 * ```sh blocks are commands the test runs; a ```json or ```text block right
 * after one (only prose between) is what it prints. Plain ``` blocks (npm
 * install, npm test, output with no command) are not run.
 */
export function readmeExamples(markdown: string): ReadmeExample[] {
  const lines = markdown.split('\n');
  const blocks: Array<{ line: number; info: string; text: string }> = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]);
    blocks.push({ line: start + 1, info: open[1], text: body.join('\n') });
  }
  const out: ReadmeExample[] = [];
  blocks.forEach((b, i) => {
    if (b.info !== 'sh') return;
    const next = blocks[i + 1];
    const shown = next && (next.info === 'json' || next.info === 'text') ? next.text : null;
    out.push({ line: b.line, script: b.text, shown, background: /#.*Ctrl-C/.test(b.text) });
  });
  return out;
}

const ULID = '[0-9a-z]{26}';
const ID = new RegExp(`\\b([a-z]+)_(${ULID})\\b`, 'g');
const BARE_ULID = new RegExp(`\\b${ULID}\\b`, 'g');
const TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A regular expression for a piece of shown output: `…` stands for anything
 * on the line, a time for any time, an id (prefix_ULID, or a bare ULID as in
 * a Message-ID) for the id the command really printed — the one learnt
 * earlier when there is one, else any, captured.
 */
function patternOf(shown: string, ids: ReadonlyMap<string, string>, captured: string[]): string {
  const parts: string[] = [];
  let rest = shown;
  const token = new RegExp(`…|${TIME.source}|\\b(?:[a-z]+_)?${ULID}\\b`, 'g');
  let last = 0;
  for (const m of rest.matchAll(token)) {
    parts.push(escape(rest.slice(last, m.index)).replace(/\s+/g, '\\s+'));
    const t = m[0];
    if (t === '…') parts.push('[^\\n]*?');
    else if (/^\d{4}-/.test(t)) parts.push(TIME.source);
    else if (ids.has(t)) parts.push(escape(ids.get(t)!));
    else {
      const prefix = /^([a-z]+_)/.exec(t)?.[1] ?? '';
      const bare = t.slice(prefix.length);
      if (ids.has(bare)) parts.push(escape(prefix + ids.get(bare)!));
      else {
        captured.push(t);
        parts.push(`(${escape(prefix)}${ULID})`);
      }
    }
    last = m.index + t.length;
  }
  parts.push(escape(rest.slice(last)).replace(/\s+/g, '\\s+'));
  rest = parts.join('');
  return rest;
}

/**
 * What of `shown` the real output lacks: for JSON, each `"key":value` pair
 * must be in it; for text, each line must match one of its lines. Ids met
 * for the first time are learnt into `ids` (shown id → real id), so that
 * later commands that name them can be given the real ones.
 */
export function missingFrom(shown: string, actual: string, ids: Map<string, string>): string[] {
  const pieces = shown.trim().startsWith('{')
    ? [...shown.matchAll(/"[A-Za-z_]+":\s*(?:"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)/g)].map((m) => m[0])
    : shown.split('\n').filter((l) => l.trim() && l.trim() !== '…');
  const missing: string[] = [];
  for (const piece of pieces) {
    const captured: string[] = [];
    const pattern = shown.trim().startsWith('{')
      ? patternOf(piece, ids, captured).replace(/:\\s\+|:/, ':\\s*')
      : `^\\s*${patternOf(piece.trim(), ids, captured)}\\s*$`;
    const m = new RegExp(pattern, 'm').exec(actual);
    if (!m) {
      missing.push(piece);
      continue;
    }
    captured.forEach((id, i) => {
      const real = m[i + 1];
      ids.set(id, real);
      const prefix = /^([a-z]+_)/.exec(id)?.[1];
      if (prefix) ids.set(id.slice(prefix.length), real.slice(prefix.length));
    });
  }
  return missing;
}

/** Every shown id that has been learnt, replaced by the real one in a command. */
export function withRealIds(script: string, ids: ReadonlyMap<string, string>): string {
  return script.replace(ID, (whole) => ids.get(whole) ?? whole).replace(BARE_ULID, (u) => ids.get(u) ?? u);
}
