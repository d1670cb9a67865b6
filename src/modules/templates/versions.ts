import { ApiError, validationError } from '../../lib/errors.js';
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
  for (const [name, v] of Object.entries(variables ?? {})) out[name] = { type: v.type ?? 'string', required: v.required ?? true };
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
  try {
    if (content.design && content.html !== null) throw validationError('html', 'a version has a design or html, not both: the design generates the html');
    if (!content.design && content.html === null && content.text === null) throw validationError('html', 'html, text or design is required');
    const main = compileParts(
      {
        subject: [content.subject, 'subject'],
        html: content.html === null ? null : [content.html, 'html'],
        text: content.text === null ? null : [content.text, 'text'],
        design: content.design ? [content.design, 'design'] : null,
      },
      content.variables,
    );
    const translations: Record<string, CompiledParts> = {};
    for (const [lang, t] of Object.entries(content.translations)) {
      translations[lang.toLowerCase()] = compileParts(translationSources(content, lang, t), content.variables);
    }
    return { main, translations };
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
  if (t.design && t.html !== undefined) throw validationError(`${at}.html`, 'a translation has a design or html, not both: the design generates the html');
  const own = t.design !== undefined || t.html !== undefined;
  const design: PartSources['design'] = t.design ? [t.design, `${at}.design`] : !own && main.design ? [main.design, 'design'] : null;
  const html: PartSources['html'] = t.html !== undefined ? [t.html, `${at}.html`] : !own && main.html !== null ? [main.html, 'html'] : null;
  const text: PartSources['text'] = t.text !== undefined ? [t.text, `${at}.text`] : !own && main.text !== null ? [main.text, 'text'] : null;
  return { subject: t.subject !== undefined ? [t.subject, `${at}.subject`] : [main.subject, 'subject'], html, text, design };
}

function compileParts(src: PartSources, declared: Declared): CompiledParts {
  const subject = compileTemplate(src.subject[0], src.subject[1], declared);
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
  const html = htmlSource ? compileTemplate(htmlSource[0], htmlSource[1], declared) : null;
  let text: CompiledTemplate | null = textSource ? compileTemplate(textSource[0], textSource[1], declared) : null;
  let textFromRenderedHtml = false;
  if (!text && htmlSource) {
    textGenerated = true;
    try {
      text = compileTemplate(textSourceFromHtml(htmlSource[0]), htmlSource[1], declared);
    } catch {
      // a tag the conversion could not keep in place (in a comment, a <style>): convert at send instead
      textFromRenderedHtml = true;
    }
  }
  return { subject, html, text, textGenerated, textFromRenderedHtml };
}

/** checkDesign names fields from `design.…`; a translation's design is reported under its own path. */
function checkDesignAt(design: Design, field: string, declared: Declared): void {
  try {
    checkDesign(design, declared);
  } catch (e) {
    if (e instanceof TemplateError && field !== 'design') throw new TemplateError(field + e.field.slice('design'.length), e.line, e.column, e.reason);
    throw e;
  }
}
