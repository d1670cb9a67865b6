import { createHash } from 'node:crypto';
import { ApiError } from '../../../lib/errors.js';
import {
  checkVariables,
  RenderNeedsRoom,
  renderTemplate as renderTree,
  RenderTooLarge,
  type CompiledTemplate,
} from './language/index.js';
import type { CompiledParts, CompiledVersion, TemplateVersion } from './template.js';
import type { SplitItem } from './templates.schema.js';
import { htmlToText } from './text-from-html.js';

// A version rendered for one send or preview (interface §4.1, §4.3). Pure.

export interface RenderedContent {
  subject: string;
  html: string | null;
  text: string | null;
  /** the translation used, or null for the main version */
  translation: string | null;
}

/** A send's `language`: the exact tag, then its base (`pt-BR` → `pt`), then the main version. */
export function partsFor(
  v: CompiledVersion,
  language: string | null | undefined,
): { parts: CompiledParts; translation: string | null } {
  if (language) {
    const tag = language.toLowerCase();
    if (v.translations[tag]) return { parts: v.translations[tag], translation: v.tags?.[tag] ?? tag };
    const base = tag.split('-')[0];
    if (v.translations[base]) return { parts: v.translations[base], translation: v.tags?.[base] ?? base };
  }
  return { parts: v.main, translation: null };
}

const invalid = (field: string, message: string) =>
  new ApiError(400, 'invalid_variables', `${field}: ${message}`, field);

/**
 * What the thread answering HTTP renders itself (renderVersion's `light`):
 * this many steps per part, and converting rendered HTML to text up to this
 * many characters; a rendering that needs more throws RenderNeedsRoom and
 * is done again on the parsing pool, with the full budget.
 */
export const LIGHT_RENDER = { steps: 10_000, htmlToTextChars: 8_000 };

function renderPart(
  t: CompiledTemplate,
  variables: Record<string, unknown>,
  html: boolean,
  language: string | null | undefined,
  part: string,
  light: boolean,
): string {
  let out: string;
  try {
    out = renderTree(t, variables, { html, language, ...(light ? { light: LIGHT_RENDER.steps } : {}) });
  } catch (e) {
    if (e instanceof RenderTooLarge) throw invalid('variables', `${part}: ${e.message}`);
    throw e;
  }
  return out;
}

/**
 * The variables are checked against the version's declarations first (400
 * `invalid_variables` naming the variable). The subject is one line: line
 * breaks a value brings are folded into spaces, so that no variable can
 * add a header; a NUL is refused.
 */
export function renderVersion(
  version: TemplateVersion,
  variables: Record<string, unknown>,
  language: string | null | undefined,
  light = false,
): RenderedContent {
  const problem = checkVariables(version.variables, variables);
  if (problem) throw invalid(`variables.${problem.variable}`, problem.message);
  const { parts, translation } = partsFor(version.compiled, language);
  const subject = oneLine(renderPart(parts.subject, variables, false, language, 'subject', light));
  if (subject === '') throw invalid('variables', 'the subject renders empty with these variables');
  // a value may bring NUL, which no header field may hold (RFC 5322 §2.2); unlike a line break it has no harmless fold
  if (subject.includes('\0'))
    throw invalid('variables', 'the subject renders with a NUL character (U+0000) with these variables');
  if (subject.length > 998)
    throw invalid(
      'variables',
      `the subject renders to ${subject.length} characters with these variables (at most 998)`,
    );
  const html = parts.html ? renderPart(parts.html, variables, true, language, 'html', light) : null;
  let text = parts.text ? renderPart(parts.text, variables, false, language, 'text', light) : null;
  if (parts.textFromRenderedHtml && html !== null) {
    if (light && html.length > LIGHT_RENDER.htmlToTextChars) throw new RenderNeedsRoom();
    text = htmlToText(html);
  } else if (parts.textGenerated && text !== null) text = tidy(text);
  return { subject, html, text, translation };
}

// Line by line, in linear time: a regex with \s* around the line breaks backtracks quadratically on long runs of spaces.
function oneLine(s: string): string {
  return s
    .split(/\r\n|\r|\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .join(' ');
}

/** A generated text part: no spaces at line ends, at most one blank line in a row. */
function tidy(s: string): string {
  return s
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * A split (interface §4.3): a recipient always gets the same version, by a
 * stable hash of the template id and the address, spread by the percents.
 */
export function splitVersion(split: SplitItem[], templateId: string, recipient: string): number {
  const h = createHash('sha256').update(`${templateId}\n${recipient.toLowerCase()}`).digest().readUInt32BE(0) % 100;
  let upTo = 0;
  for (const s of split) {
    upTo += s.percent;
    if (h < upTo) return s.version;
  }
  return split[split.length - 1].version;
}
