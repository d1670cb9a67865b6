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
const FROM_VARIABLE: Record<UrlUse, ReadonlySet<string>> = { link: new Set(['http', 'https', 'mailto']), image: new Set(['http', 'https']) };

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

const encodes = (pipe: PipeStep[]) => pipe.some((s) => 'filter' in s && s.filter === 'url');

function encodeOutputs(nodes: Node[] | null, skipFirst: boolean): void {
  nodes?.forEach((n, i) => {
    if (typeof n === 'string' || (skipFirst && i === 0)) return;
    if ('out' in n) {
      if (!encodes(n.pipe)) n.pipe.push({ filter: 'url', arg: null });
    } else if ('branches' in n) {
      n.branches.forEach((b) => encodeOutputs(b.body, false));
      encodeOutputs(n.otherwise, false);
    } else if ('each' in n) {
      encodeOutputs(n.body, false);
      encodeOutputs(n.otherwise, false);
    } else encodeOutputs(n.url, false);
  });
}

/**
 * A URL field's placeholders, once parsed: one that opens the field gives
 * the URL itself (`whole`; checked as a `variable` URL when rendered); every
 * other one is percent-encoded (the `url` filter), unless it already is.
 */
export function encodeUrlParts(node: UrlNode): void {
  const first = node.url[0];
  node.whole = first !== undefined && typeof first !== 'string' && 'out' in first && !encodes(first.pipe);
  encodeOutputs(node.url, node.whole);
}
