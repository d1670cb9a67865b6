import { Type, type Static } from '@sinclair/typebox';
import { NoNulString, Nullable, StringEnum } from '../../../lib/schema.js';
import { Design } from './design/design.schema.js';
import { VARIABLE_TYPES } from './language/index.js';

// interface §4.3, field by field; the template fields of a send (§4.1) use the same patterns.
export const TEMPLATE_ID_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$';
export const LANGUAGE_PATTERN = '^[a-z]{2,3}(-[A-Za-z]{2,4})?$';
export const VARIABLE_NAME_PATTERN = '^[a-zA-Z_][a-zA-Z0-9_]*$';
export const MAX_VERSION = 9007199254740991;

// NUL is no character of a header field (RFC 5322 §2.2) nor of PostgreSQL's text: every text a
// template stores refuses it when the template is saved, naming the field, not at each send
const Subject = NoNulString({ minLength: 1, maxLength: 998 });
const Body = NoNulString({ maxLength: 1_000_000 });
const Name = NoNulString({ minLength: 1, maxLength: 200 });
const Category = NoNulString({ minLength: 1, maxLength: 40 });

export const VariableDefinition = Type.Object(
  {
    type: Type.Optional(StringEnum(VARIABLE_TYPES, { default: 'string' })),
    required: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);
export type VariableDefinition = Static<typeof VariableDefinition>;

export const Variables = Type.Unsafe<Record<string, VariableDefinition>>({
  type: 'object',
  maxProperties: 200,
  propertyNames: { pattern: VARIABLE_NAME_PATTERN },
  additionalProperties: VariableDefinition,
});

export const Translation = Type.Object(
  {
    subject: Type.Optional(Subject),
    html: Type.Optional(Body),
    text: Type.Optional(Body),
    design: Type.Optional(Design),
  },
  { additionalProperties: false },
);
export type Translation = Static<typeof Translation>;

/** The content of a version: what a publish stores, and what a draft's render reads. */
const versionFields = () => ({
  subject: Subject,
  html: Type.Optional(Body),
  text: Type.Optional(Body),
  design: Type.Optional(Design),
  translations: Type.Optional(
    Type.Unsafe<Record<string, Translation>>({
      type: 'object',
      maxProperties: 50,
      propertyNames: { pattern: LANGUAGE_PATTERN },
      additionalProperties: Translation,
    }),
  ),
  variables: Type.Optional(Variables),
});

export const PublishTemplateBody = Type.Object(
  {
    id: Type.String({ pattern: TEMPLATE_ID_PATTERN }),
    name: Type.Optional(Name),
    category: Type.Optional(Category),
    ...versionFields(),
  },
  { additionalProperties: false },
);
export type PublishTemplateBody = Static<typeof PublishTemplateBody>;

const Version = Type.Integer({ minimum: 1, maximum: MAX_VERSION });

export const SplitItem = Type.Object(
  { version: Version, percent: Type.Integer({ minimum: 1, maximum: 100 }) },
  { additionalProperties: false },
);
export type SplitItem = Static<typeof SplitItem>;

export const UpdateTemplateBody = Type.Object(
  {
    name: Type.Optional(Name),
    category: Type.Optional(Nullable(Category)),
    split: Type.Optional(Nullable(Type.Array(SplitItem, { minItems: 2, maxItems: 5 }))),
  },
  { additionalProperties: false },
);
export type UpdateTemplateBody = Static<typeof UpdateTemplateBody>;

export const RestoreTemplateBody = Type.Object({ version: Version }, { additionalProperties: false });
export type RestoreTemplateBody = Static<typeof RestoreTemplateBody>;

/** POST /v1/templates/{id}/render: the preview (beyond the interface; issue 20 gives the shape). */
export const RenderTemplateBody = Type.Object(
  {
    version: Type.Optional(Version),
    language: Type.Optional(Type.String({ pattern: LANGUAGE_PATTERN })),
    variables: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: false },
);
export type RenderTemplateBody = Static<typeof RenderTemplateBody>;

/** POST /v1/templates/render: a version not published yet (an editor's draft), rendered as a publish and a send would. */
export const RenderDraftBody = Type.Object(
  {
    template: Type.Object(versionFields(), {
      additionalProperties: false,
      description: 'the version as POST /v1/templates would publish it, without id, name and category',
    }),
    language: Type.Optional(Type.String({ pattern: LANGUAGE_PATTERN })),
    variables: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: false },
);
export type RenderDraftBody = Static<typeof RenderDraftBody>;
