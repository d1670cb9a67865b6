import type { Node, PipeStep, UrlUse } from './ast.js';

// The URL fields of a design (button url, image src, social links…). A
// browser drops tabs and newlines inside a URL and spaces and control
// characters around it (WHATWG URL §4.4), so `java\tscript:` runs as
// javascript: — the scheme is read with every whitespace, control and
// format character removed, wherever it stands.

type UrlNode = Extract<Node, { url: Node[] }>;

/** Schemes that run code or carry a page of their own where they are followed. */
const REFUSED = new Set(['javascript', 'vbscript', 'data']);
/** What a variable that gives a whole URL may give. */
const FROM_VARIABLE: Record<UrlUse, ReadonlySet<string>> = {
  link: new Set(['http', 'https', 'mailto']),
  image: new Set(['http', 'https']),
};

const INVISIBLE = /[\s\p{Cc}\p{Cf}]/gu;
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
// an <img> shows image data and runs nothing in it (not even an SVG's scripts)
const IMAGE_DATA = /^data:image\//i;

/**
 * Why a design may not use `url`, or null: the one check, at publish and at
 * render. `written`: the URL as the template's author wrote it, refused if
 * it is javascript:, vbscript: or data: (an image source may be
 * data:image/…). `variable`: a URL whose start a variable gave, which must
 * be http: or https: (or mailto: for a link, data:image/… for an image).
 */
export function urlProblem(url: string, use: UrlUse, origin: 'written' | 'variable'): string | null {
  const compact = url.replace(INVISIBLE, '');
  const scheme = SCHEME.exec(compact)?.[1]!.toLowerCase() ?? null;
  if (use === 'image' && IMAGE_DATA.test(compact)) return null;
  if (origin === 'written') {
    if (scheme === null || !REFUSED.has(scheme)) return null;
    return `${scheme}: URLs are refused${scheme === 'data' && use === 'image' ? ' (an image may be data:image/…)' : ''}`;
  }
  if (scheme !== null && FROM_VARIABLE[use].has(scheme)) return null;
  return `a URL a variable gives must be ${use === 'link' ? 'http:, https: or mailto:' : 'http:, https: or data:image/…'}`;
}

// What decides urlProblem's `written` answer: a refused scheme with its colon; for an image, data:image/.
const DECIDING = [...[...REFUSED].map((s) => `${s}:`), 'data:image/'];

/** A URL's text as urlProblem reads its scheme: without invisible characters, ASCII letters in lower case. */
export const compactUrl = (text: string) => text.replace(INVISIBLE, '').replace(/[A-Z]+/g, (s) => s.toLowerCase());

/**
 * Whether text added after this start of a written URL (compactUrl) could
 * still change urlProblem's `written` answer: only while it is a proper
 * beginning of `javascript:`, `vbscript:`, `data:` or `data:image/`.
 */
export const startIsOpen = (start: string) => DECIDING.some((d) => d.length > start.length && d.startsWith(start));

const encodes = (pipe: PipeStep[]) => pipe.some((s) => 'filter' in s && s.filter === 'url');

/**
 * The `url` filter's argument inside a mailto: address: RFC 6068 §2 writes
 * the address as an addr-spec, its `@` literal (some clients read no
 * `%40`); every other character stays encoded, so a value cannot add a
 * header (`?cc=`) or a second address (`,`). Set only here: an author's
 * `url` takes no argument.
 */
export const MAILTO_ADDRESS = 'address';

const MAILTO = /^mailto:/i;

/** Whether the placeholders met so far stand in a mailto: URL's address: until a `?` (its headers) or a `#`. */
interface Walk {
  address: boolean;
}

function encodeOutputs(nodes: Node[] | null, skipFirst: boolean, walk: Walk): void {
  nodes?.forEach((n, i) => {
    if (typeof n === 'string') {
      if (/[?#]/.test(n)) walk.address = false;
      return;
    }
    if (skipFirst && i === 0) return;
    if ('out' in n) {
      if (!encodes(n.pipe)) n.pipe.push({ filter: 'url', arg: walk.address ? MAILTO_ADDRESS : null });
    } else if ('branches' in n) {
      n.branches.forEach((b) => encodeOutputs(b.body, false, walk));
      encodeOutputs(n.otherwise, false, walk);
    } else if ('each' in n) {
      encodeOutputs(n.body, false, walk);
      encodeOutputs(n.otherwise, false, walk);
    } else encodeOutputs(n.url, false, walk);
  });
}

/**
 * A URL field's placeholders, once parsed: one that opens the field gives
 * the URL itself (`whole`; checked as a `variable` URL when rendered); every
 * other one is percent-encoded (the `url` filter), unless it already is, and
 * keeps `@` in the address of a field that opens with `mailto:`. A `?` in
 * any branch ends the address for every placeholder after it in the source.
 */
export function encodeUrlParts(node: UrlNode): void {
  const first = node.url[0];
  node.whole = first !== undefined && typeof first !== 'string' && 'out' in first && !encodes(first.pipe);
  encodeOutputs(node.url, node.whole, {
    address: typeof first === 'string' && MAILTO.test(first.replace(INVISIBLE, '')),
  });
}
