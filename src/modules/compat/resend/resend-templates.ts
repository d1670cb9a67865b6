import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { validationError } from '../../../lib/errors.js';
import { StringEnum } from '../../../lib/schema.js';
import { validateBody } from '../../../lib/validate.js';
import type { Declared } from '../../sending/templates/language/index.js';
import type { TemplateVersionInfo } from '../../sending/templates/template.js';
import {
  PublishTemplateBody,
  TEMPLATE_ID_PATTERN,
  VARIABLE_NAME_PATTERN,
  type VariableDefinition,
} from '../../sending/templates/templates.schema.js';
import { translateResend, type Resolve } from './resend-variables.js';

// Resend's templates (docs/resend.md) as our template versions (docs/templates.md). Pure.
//
// A Resend template is one of ours: its id is ours (a client-chosen slug), so its alias is the same
// string, and `alias` on create chooses it (an id is made when none is given). Ours have no drafts:
// every write through /resend publishes a version at once, the one sends use; `publish` confirms.
// The source as Resend's syntax wrote it (`{{{NAME|fallback}}}`, variables with their fallbacks) is
// kept beside the version (its foreignSource) so that a get answers it back.

const OrNull = <T extends TSchema>(t: T) => Type.Optional(Type.Union([t, Type.Null()]));

const ResendTemplateVariable = Type.Object(
  {
    key: Type.String(),
    type: StringEnum(['string', 'number'] as const),
    fallback_value: OrNull(Type.Union([Type.String(), Type.Number()])),
  },
  { additionalProperties: true },
);
export type ResendTemplateVariable = Static<typeof ResendTemplateVariable>;

const fields = {
  subject: OrNull(Type.String()),
  text: OrNull(Type.String()),
  alias: OrNull(Type.String()),
  from: OrNull(Type.String()),
  reply_to: OrNull(Type.Union([Type.String(), Type.Array(Type.String())])),
  variables: OrNull(Type.Array(ResendTemplateVariable)),
};

export const ResendCreateTemplateBody = Type.Object(
  { ...fields, name: Type.String(), html: Type.String() },
  { additionalProperties: true },
);
export type ResendCreateTemplateBody = Static<typeof ResendCreateTemplateBody>;

export const ResendUpdateTemplateBody = Type.Object(
  { ...fields, name: OrNull(Type.String()), html: OrNull(Type.String()) },
  { additionalProperties: true },
);
export type ResendUpdateTemplateBody = Static<typeof ResendUpdateTemplateBody>;

/** A version's source as written through /resend (TemplateVersionInfo.foreignSource). */
export interface ResendTemplateSource {
  syntax: 'resend';
  subject: string;
  html: string | null;
  text: string | null;
  /** Resend's declarations; null: the version's own (ours, when a /v1 template was changed without them) */
  variables: Array<{ key: string; type: 'string' | 'number'; fallback_value: string | number | null }> | null;
}

export const isResendSource = (x: unknown): x is ResendTemplateSource =>
  typeof x === 'object' && x !== null && (x as { syntax?: unknown }).syntax === 'resend';

/** Resend's declarations as a source keeps them: key, type and fallback (null: none), nothing else. */
export const keptVariables = (vars: ResendTemplateVariable[]): NonNullable<ResendTemplateSource['variables']> =>
  vars.map((v) => ({ key: v.key, type: v.type, fallback_value: v.fallback_value ?? null }));

/** Resend reserves these names for a contact's fields (its docs, "template variables"). */
const RESERVED = new Set(['FIRST_NAME', 'LAST_NAME', 'EMAIL', 'UNSUBSCRIBE_URL', 'contact', 'this']);
const MAX_VARIABLES = 50;

/** `from` and `reply_to` are a send's here: a template of ours carries no sender. */
export function refuseSender(b: { from?: string | null; reply_to?: string | string[] | null }): void {
  if (b.from)
    throw validationError(
      'from',
      'is not available here: a Posthorn template carries no sender (give from to each send)',
    );
  if (b.reply_to && b.reply_to.length)
    throw validationError(
      'reply_to',
      'is not available here: a Posthorn template carries no reply_to (give it to each send)',
    );
}

/** A new template's id: the alias, which must be one of ours. */
export function checkedAlias(alias: string): string {
  if (!new RegExp(TEMPLATE_ID_PATTERN).test(alias))
    throw validationError(
      'alias',
      "must be 1 to 64 lower-case letters, digits, '_' or '-', starting with a letter or digit (it is the template's id here)",
    );
  return alias;
}

/** Resend's declarations as ours (whether a send must give each: requiredWhereBare), and each one's fallback as text (null: none). */
function declarationsOf(vars: NonNullable<ResendTemplateSource['variables']>) {
  if (vars.length > MAX_VARIABLES) throw validationError('variables', `holds at most ${MAX_VARIABLES} variables`);
  const variables: Record<string, VariableDefinition> = {};
  const fallbacks = new Map<string, string | null>();
  vars.forEach((v, i) => {
    const at = `variables[${i}]`;
    if (!new RegExp(VARIABLE_NAME_PATTERN).test(v.key) || v.key === '__proto__')
      throw validationError(`${at}.key`, 'must be letters, digits and _, not starting with a digit');
    if (RESERVED.has(v.key)) throw validationError(`${at}.key`, `'${v.key}' is a reserved name`);
    if (fallbacks.has(v.key)) throw validationError(`${at}.key`, `'${v.key}' is declared twice`);
    const fallback = v.fallback_value ?? null;
    if (fallback !== null && typeof fallback !== v.type)
      throw validationError(`${at}.fallback_value`, `must be a ${v.type}, as the variable's type`);
    variables[v.key] = { type: v.type };
    fallbacks.set(v.key, fallback === null ? null : String(fallback));
  });
  return { variables, fallbacks };
}

/** What a version has besides its parts, kept by a change through /resend that does not give them. */
export interface VersionBase {
  variables: Declared;
  translations: TemplateVersionInfo['translations'];
  design: TemplateVersionInfo['design'];
}

/**
 * The body of POST /v1/templates that publishes `source` as template `id`: each `{{{NAME}}}` a
 * declared variable (its inline fallback, else its declared one); the base's translations kept,
 * and its design while no html replaces it.
 */
export function publishBodyOf(
  id: string,
  name: string | undefined,
  source: ResendTemplateSource,
  base: VersionBase | null,
): PublishTemplateBody {
  const own = base?.variables ?? {};
  const { variables, fallbacks } = source.variables
    ? declarationsOf(source.variables)
    : { variables: own, fallbacks: new Map(Object.keys(own).map((k) => [k, null])) };
  const { parts, bare } = translatedParts(source, fallbacks);
  const body: Record<string, unknown> = {
    id,
    name,
    ...parts,
    variables: source.variables ? requiredWhereBare(variables, bare) : variables,
    translations: base && Object.keys(base.translations).length ? base.translations : undefined,
    design: source.html === null ? (base?.design ?? undefined) : undefined,
  };
  for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
  return validateBody<PublishTemplateBody>(PublishTemplateBody, body);
}

/** The parts in our language, and the names some `{{{…}}}` of which has no fallback at all. */
function translatedParts(source: ResendTemplateSource, fallbacks: Map<string, string | null>) {
  const bare = new Set<string>();
  const resolve: Resolve = ({ name: key, fallback }) => {
    if (!fallbacks.has(key))
      return { refused: `Variable '${key}' is used in the template but not defined in the variables list` };
    const used = fallback ?? fallbacks.get(key) ?? null;
    if (used === null) bare.add(key);
    return { path: key, fallback: used };
  };
  const part = (v: string | null, field: string) => (v === null ? undefined : translateResend(v, field, resolve));
  const parts = {
    subject: part(source.subject, 'subject'),
    html: part(source.html, 'html'),
    text: part(source.text, 'text'),
  };
  return { parts, bare };
}

/**
 * A send must give a variable (Resend refuses it otherwise) only where a `{{{…}}}` of it has no
 * fallback, declared or its own: without it, that placeholder would be left empty.
 */
function requiredWhereBare(
  variables: Record<string, VariableDefinition>,
  bare: Set<string>,
): Record<string, VariableDefinition> {
  const out: Record<string, VariableDefinition> = {};
  for (const [k, v] of Object.entries(variables)) out[k] = { ...v, required: bare.has(k) };
  return out;
}

/** What a change through /resend starts from: the latest version's source as it was written. */
export function sourceOf(v: TemplateVersionInfo): ResendTemplateSource {
  if (isResendSource(v.foreignSource)) return v.foreignSource;
  return { syntax: 'resend', subject: v.subject, html: v.html, text: v.text, variables: null };
}

/** POST /templates/{id}/duplicate: the latest version published again under `id`, named "… (copy)". */
export function duplicateBody(name: string, v: TemplateVersionInfo, id: string): PublishTemplateBody {
  const body: Record<string, unknown> = {
    id,
    name: `${name} (copy)`.slice(0, 200),
    subject: v.subject,
    html: v.html ?? undefined,
    text: v.text ?? undefined,
    design: v.design ?? undefined,
    translations: v.translations,
    variables: v.variables,
  };
  for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
  return validateBody<PublishTemplateBody>(PublishTemplateBody, body);
}
