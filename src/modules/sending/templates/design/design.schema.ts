import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { NoNulString, StringEnum } from '../../../../lib/schema.js';

// The visual design of a template version (interface §4.3). Each block type
// has its own fields; the item schema picks the block's schema by its `type`
// with if/then, so that ajv's first error names the block's own field
// (`design.blocks[2].url is required`) rather than one failure per union arm.

export const BLOCK_TYPES = [
  'heading',
  'text',
  'button',
  'image',
  'divider',
  'spacer',
  'footer',
  'logo',
  'columns',
  'product',
  'discount',
  'social',
  'list',
  'quote',
  'signature',
  'event',
  'rating',
  'table',
] as const;
export const SOCIAL_NETWORKS = [
  'website',
  'x',
  'facebook',
  'instagram',
  'linkedin',
  'youtube',
  'tiktok',
  'github',
] as const;
export const COLUMN_FORMATS = ['text', 'currency', 'number', 'date'] as const;
export const IDENTIFIER = '^[A-Za-z_][A-Za-z0-9_]*$';

const Hex = (fallback: string) => Type.String({ pattern: '^#[0-9A-Fa-f]{6}$', default: fallback });
const Align = (fallback: 'left' | 'center') =>
  Type.Optional(StringEnum(['left', 'center', 'right'] as const, { default: fallback }));
/** A required text, may hold placeholders; without NUL, which neither mail nor PostgreSQL's text can hold. */
const Req = (max: number) => NoNulString({ minLength: 1, maxLength: max });
/** An optional text, may hold placeholders; empty means absent. */
const Opt = (max: number, fallback?: string) =>
  Type.Optional(NoNulString({ maxLength: max, ...(fallback === undefined ? {} : { default: fallback }) }));
const When = Type.Optional(
  Type.String({
    maxLength: 200,
    pattern: "^[A-Za-z0-9_.@' =!<>-]*$",
    description: 'a condition of the template language; the block shows when it holds',
  }),
);

function block<T extends string, P extends Record<string, TSchema>>(type: T, fields: P) {
  return Type.Object({ type: Type.Literal(type), when: When, ...fields }, { additionalProperties: false });
}

const SocialLink = Type.Object(
  { network: StringEnum(SOCIAL_NETWORKS), url: Req(2000) },
  { additionalProperties: false },
);
const TableColumn = Type.Object(
  {
    header: Req(60),
    field: Type.String({ pattern: IDENTIFIER, maxLength: 64 }),
    format: Type.Optional(StringEnum(COLUMN_FORMATS, { default: 'text' })),
  },
  { additionalProperties: false },
);

export const BLOCK_SCHEMAS = {
  heading: block('heading', { text: Req(300), align: Align('left') }),
  text: block('text', { text: Req(5000), align: Align('left') }),
  button: block('button', { label: Req(80), url: Req(2000), align: Align('center') }),
  image: block('image', { url: Req(2000), alt: Opt(200, ''), link: Opt(2000, '') }),
  divider: block('divider', {}),
  spacer: block('spacer', { height: Type.Optional(Type.Integer({ minimum: 4, maximum: 120, default: 24 })) }),
  footer: block('footer', { text: Req(1000) }),
  logo: block('logo', {
    url: Req(2000),
    alt: Opt(200),
    link: Opt(2000),
    width: Type.Optional(Type.Integer({ minimum: 40, maximum: 300, default: 140 })),
    align: Align('left'),
  }),
  columns: block('columns', {
    image_url: Req(2000),
    image_alt: Opt(200),
    title: Opt(200),
    text: Opt(2000),
    button_label: Opt(80),
    button_url: Opt(2000),
    image_side: Type.Optional(StringEnum(['left', 'right'] as const, { default: 'left' })),
  }),
  product: block('product', {
    name: Req(200),
    image_url: Opt(2000),
    description: Opt(500),
    price: Opt(60),
    url: Opt(2000),
    button_label: Opt(80, 'View'),
  }),
  discount: block('discount', { code: Req(40), headline: Opt(200, 'Your discount'), details: Opt(300) }),
  social: block('social', { links: Type.Array(SocialLink, { minItems: 1, maxItems: 8 }), align: Align('center') }),
  list: block('list', {
    items: Type.Array(Req(300), { minItems: 1, maxItems: 20 }),
    ordered: Type.Optional(Type.Boolean({ default: false })),
  }),
  quote: block('quote', { text: Req(1000), author: Opt(100) }),
  signature: block('signature', {
    name: Req(100),
    title: Opt(100),
    company: Opt(100),
    email: Opt(200),
    phone: Opt(40),
    website: Opt(2000),
  }),
  event: block('event', {
    title: Req(200),
    date: Req(100),
    time: Opt(100),
    place: Opt(200),
    url: Opt(2000),
    button_label: Opt(80, 'Add to calendar'),
  }),
  rating: block('rating', { question: Req(200), url: Req(2000), low_label: Opt(40), high_label: Opt(40) }),
  table: block('table', {
    rows: Type.String({ pattern: IDENTIFIER, maxLength: 64, description: 'an array variable; one table row per item' }),
    columns: Type.Array(TableColumn, { minItems: 1, maxItems: 6 }),
    currency: Type.Optional(Type.String({ pattern: '^[A-Za-z]{3}$', default: 'USD' })),
  }),
} as const;

type BlockSchemas = typeof BLOCK_SCHEMAS;
export type BlockType = (typeof BLOCK_TYPES)[number];
export type Block = { [K in BlockType]: Static<BlockSchemas[K]> }[BlockType];
export type BlockOf<K extends BlockType> = Static<BlockSchemas[K]>;
export type SocialNetwork = (typeof SOCIAL_NETWORKS)[number];
export type ColumnFormat = (typeof COLUMN_FORMATS)[number];

const BlockSchema = Type.Unsafe<Block>({
  type: 'object',
  required: ['type'],
  properties: { type: StringEnum(BLOCK_TYPES) },
  allOf: BLOCK_TYPES.map((t) => ({
    if: { properties: { type: { const: t } }, required: ['type'] },
    then: BLOCK_SCHEMAS[t],
  })),
});

export const Design = Type.Object(
  {
    accent: Type.Optional(Hex('#1a56db')),
    background: Type.Optional(Hex('#f4f5f7')),
    font: Type.Optional(StringEnum(['sans', 'serif'] as const, { default: 'sans' })),
    blocks: Type.Array(BlockSchema, { minItems: 1, maxItems: 100 }),
  },
  { additionalProperties: false, description: 'a visual design; generates the HTML and text of the version' },
);
export type Design = Static<typeof Design>;
