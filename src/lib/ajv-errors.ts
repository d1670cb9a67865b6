import type { ErrorObject } from 'ajv';

/** '/attachments/0/filename' → 'attachments[0].filename' */
export function pointerToField(pointer: string, extra?: string): string {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  let out = '';
  for (const part of parts) {
    if (/^[0-9]+$/.test(part)) out += `[${part}]`;
    else out += out ? `.${part}` : part;
  }
  return out;
}

export interface FieldError {
  field: string;
  message: string;
}

/** One ajv error → the field it concerns and a sentence a client can act on. */
export function describeAjvError(err: ErrorObject, rootName: string): FieldError {
  const p = err.params as Record<string, unknown>;
  // a propertyNames failure: the offending key is the field (tags.bad key)
  const badKey = (err as ErrorObject & { propertyName?: string }).propertyName;
  if (badKey !== undefined) {
    return {
      field: pointerToField(err.instancePath, badKey),
      message: `is not an allowed key${err.keyword === 'pattern' ? ` (${String(p.pattern)})` : ''}`,
    };
  }
  switch (err.keyword) {
    case 'additionalProperties':
      return { field: pointerToField(err.instancePath, String(p.additionalProperty)), message: 'is not a known field' };
    case 'required':
      return { field: pointerToField(err.instancePath, String(p.missingProperty)), message: 'is required' };
    default:
      return { field: pointerToField(err.instancePath) || rootName, message: sentenceFor(err, p) };
  }
}

function sentenceFor(err: ErrorObject, p: Record<string, unknown>): string {
  switch (err.keyword) {
    case 'type': {
      const t = ([] as unknown[]).concat(p.type).join(' or ');
      return `must be ${/^[aeiou]/.test(t) ? 'an' : 'a'} ${t}`;
    }
    case 'maxLength':
      return `must be at most ${String(p.limit)} characters`;
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters`;
    case 'maxItems':
      return `must have at most ${String(p.limit)} items`;
    case 'minItems':
      return `must have at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}`;
    case 'maxProperties':
      return `must have at most ${String(p.limit)} entries`;
    case 'minProperties':
      return `must have at least ${String(p.limit)} entries`;
    case 'maximum':
    case 'minimum':
    case 'exclusiveMaximum':
    case 'exclusiveMinimum':
      return `must be ${String(p.comparison)} ${String(p.limit)}`;
    case 'enum':
      return `must be one of: ${(p.allowedValues as unknown[]).map((v) => String(v)).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'pattern':
      return `does not have the expected format (${String(p.pattern)})`;
    case 'format':
      return `must be a valid ${String(p.format)}`;
    case 'propertyNames':
      return `has an invalid key "${String(p.propertyName)}"`;
    default:
      return err.message ?? 'is invalid';
  }
}
