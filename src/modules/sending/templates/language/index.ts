// The template language (interface §2.4, CONTRACT §6): pure, no I/O.
// lexer → parser (compileTemplate, at publish) → tree → renderTemplate (at send).
export type { CompiledCondition, CompiledTemplate, Declared, UrlUse, VariableSpec, VariableType } from './ast.js';
export { VARIABLE_TYPES } from './ast.js';
export { TemplateError, Where } from './errors.js';
export { compileCondition, compileTemplate, type CompileOptions } from './parser.js';
export { urlProblem } from './urls.js';
export { checkWrittenUrl } from './written-urls.js';
export {
  RENDER_BUDGET,
  RenderNeedsRoom,
  RenderTooLarge,
  renderTemplate,
  testCondition,
  type RenderOptions,
} from './render.js';
export { checkVariables } from './variables.js';
export { tagSpans } from './lexer.js';
