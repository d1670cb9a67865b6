// The template language (interface §2.4, CONTRACT §6): pure, no I/O.
// lexer → parser (compileTemplate, at publish) → tree → renderTemplate (at send).
export type { CompiledCondition, CompiledTemplate, Declared, VariableSpec, VariableType } from './ast.js';
export { VARIABLE_TYPES } from './ast.js';
export { TemplateError } from './errors.js';
export { compileCondition, compileTemplate } from './parser.js';
export { escapeHtml, RENDER_BUDGET, RenderNeedsRoom, RenderTooLarge, renderTemplate, testCondition, type RenderOptions } from './render.js';
export { checkVariables } from './variables.js';
export { tagSpans } from './lexer.js';
