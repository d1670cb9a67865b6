import type { Declared, VariableType } from './ast.js';

const TYPE_OF: Record<VariableType, (v: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  boolean: (v) => typeof v === 'boolean',
  array: (v) => Array.isArray(v),
  object: (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
};

const kindOf = (v: unknown) => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v);

/**
 * The variables of a send against what the version declares (interface §7
 * `invalid_variables`): the first required one missing (or null) or of the
 * wrong type. Variables the version does not declare are ignored.
 */
export function checkVariables(
  declared: Declared,
  variables: Record<string, unknown>,
): { variable: string; message: string } | null {
  for (const name of Object.keys(declared)) {
    const spec = declared[name];
    const v = Object.hasOwn(variables, name) ? variables[name] : undefined;
    if (v === undefined || v === null) {
      if (spec.required !== false) return { variable: name, message: 'is required by the template' };
      continue;
    }
    if (!TYPE_OF[spec.type](v))
      return {
        variable: name,
        message: `must be ${spec.type === 'array' || spec.type === 'object' ? 'an' : 'a'} ${spec.type} (got ${kindOf(v)})`,
      };
  }
  return null;
}
