import { ApiError, validationError } from '../../../lib/errors.js';
import type { Design } from './design/design.schema.js';
import { checkDesign, designToSource } from './design/design-source.js';
import { compileTemplate, TemplateError, type CompiledTemplate, type Declared } from './language/index.js';
import type { CompiledParts, CompiledVersion, VersionContent } from './template.js';
import type { Translation, VariableDefinition } from './templates.schema.js';
import { textSourceFromHtml } from './text-from-html.js';

// A version as it is published (interface §4.3): every part and translation
// parsed once, every mistake refused with its field, line and column. Pure.

/** interface §4.3: type defaults to string, required to true. */
export function declaredOf(variables: Record<string, VariableDefinition> | undefined): Declared {
  const out: Declared = {};
  for (const [name, v] of Object.entries(variables ?? {})) {
    // as a key of a plain object it would set the prototype instead of declaring a variable
    if (name === '__proto__') throw validationError('variables.__proto__', 'is a reserved name');
    out[name] = { type: v.type ?? 'string', required: v.required ?? true };
  }
  return out;
}

/** The fields of one part set, with where each came from (the field a mistake is reported against). */
interface PartSources {
  subject: [string, string];
  html: [string, string] | null;
  text: [string, string] | null;
  design: [Design, string] | null;
}

export function compileVersion(content: VersionContent): CompiledVersion {
  // translations inherit the main version's parts: each distinct source is parsed (and converted to text) once
  const memo = new Map<string, CompiledTemplate | null>();
  try {
    if (content.design && content.html !== null)
      throw validationError('html', 'a version has a design or html, not both: the design generates the html');
    if (!content.design && content.html === null && content.text === null)
      throw validationError('html', 'html, text or design is required');
    const main = compileParts(
      {
        subject: [content.subject, 'subject'],
        html: content.html === null ? null : [content.html, 'html'],
        text: content.text === null ? null : [content.text, 'text'],
        design: content.design ? [content.design, 'design'] : null,
      },
      content.variables,
      memo,
    );
    const translations: Record<string, CompiledParts> = {};
    const tags: Record<string, string> = {};
    for (const [lang, t] of Object.entries(content.translations)) {
      const key = lang.toLowerCase();
      if (tags[key] !== undefined)
        throw validationError(
          `translations.${lang}`,
          `is the same language as translations.${tags[key]} (tags are compared without case)`,
        );
      tags[key] = lang;
      translations[key] = compileParts(translationSources(content, lang, t), content.variables, memo);
    }
    return { main, translations, tags };
  } catch (e) {
    if (e instanceof TemplateError) throw new ApiError(400, 'validation_error', e.message, e.field);
    throw e;
  }
}

/**
 * What a translation omits comes from the main version (interface §4.3),
 * with one exception: a translation that brings its own html or design
 * gets its text generated from them, not the main version's text, which is
 * in another language.
 */
function translationSources(main: VersionContent, lang: string, t: Translation): PartSources {
  const at = `translations.${lang}`;
  if (t.design && t.html !== undefined)
    throw validationError(`${at}.html`, 'a translation has a design or html, not both: the design generates the html');
  const own = t.design !== undefined || t.html !== undefined;
  const design: PartSources['design'] = t.design
    ? [t.design, `${at}.design`]
    : !own && main.design
      ? [main.design, 'design']
      : null;
  const html: PartSources['html'] =
    t.html !== undefined ? [t.html, `${at}.html`] : !own && main.html !== null ? [main.html, 'html'] : null;
  const text: PartSources['text'] =
    t.text !== undefined ? [t.text, `${at}.text`] : !own && main.text !== null ? [main.text, 'text'] : null;
  return {
    subject: t.subject !== undefined ? [t.subject, `${at}.subject`] : [main.subject, 'subject'],
    html,
    text,
    design,
  };
}

function compileParts(src: PartSources, declared: Declared, memo: Map<string, CompiledTemplate | null>): CompiledParts {
  const once = (kind: string, source: string, field: string, make: () => CompiledTemplate | null) => {
    const key = `${kind}\u0000${field}\u0000${source}`;
    if (!memo.has(key)) memo.set(key, make());
    return memo.get(key)!;
  };
  // a design's generated sources hold {{#url}} around its URL fields (an author's never do)
  const compile = (source: string, field: string, generated = false) =>
    once(generated ? 'design' : 'tree', source, field, () =>
      compileTemplate(source, field, declared, { urlFields: generated }),
    );
  const subject = compile(src.subject[0], src.subject[1]);
  let htmlSource = src.html;
  let textSource = src.text;
  let textGenerated = false;
  if (src.design) {
    const [design, field] = src.design;
    checkDesignAt(design, field, declared);
    const generated = designToSource(design);
    htmlSource = [generated.html, field];
    if (!textSource) {
      textSource = [generated.text, field];
      textGenerated = true;
    }
  }
  const html = htmlSource ? compile(htmlSource[0], htmlSource[1], src.design !== null) : null;
  let text: CompiledTemplate | null = textSource ? compile(textSource[0], textSource[1], textGenerated) : null;
  let textFromRenderedHtml = false;
  if (!text && htmlSource) {
    textGenerated = true;
    const [html0, field] = htmlSource;
    text = once('text', html0, field, () => {
      let source: string | null;
      try {
        source = textSourceFromHtml(html0);
      } catch (e) {
        // html-to-text recurses per element: HTML nested thousands deep overflows it, here and at every send
        throw validationError(
          field,
          `cannot be turned into a text part (${(e as Error).message}): send a text part too`,
        );
      }
      try {
        return source === null ? null : compileTemplate(source, field, declared);
      } catch (e) {
        if (!(e instanceof TemplateError)) throw e;
        return null;
      }
    });
    // a tag the conversion could not keep in place (in a comment, a <style>): convert at send instead
    textFromRenderedHtml = text === null;
  }
  return { subject, html, text, textGenerated, textFromRenderedHtml };
}

/** checkDesign names fields from `design.…`; a translation's design is reported under its own path. */
function checkDesignAt(design: Design, field: string, declared: Declared): void {
  try {
    checkDesign(design, declared);
  } catch (e) {
    if (e instanceof TemplateError && field !== 'design')
      throw new TemplateError(field + e.field.slice('design'.length), e.line, e.column, e.reason);
    throw e;
  }
}
