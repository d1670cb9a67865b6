import { Type, type Static } from '@sinclair/typebox';
import { NoNulString, pageQueryFields } from '../../../lib/schema.js';
import { TEMPLATE_ID_PATTERN } from '../../sending/templates/templates.schema.js';

const fields = {
  name: NoNulString({ minLength: 1, maxLength: 200, description: "the form's title on its page" }),
  audience_id: Type.String({ minLength: 1, maxLength: 40, description: 'the audience a confirmed contact joins' }),
  fields: Type.Array(NoNulString({ minLength: 1, maxLength: 50 }), {
    maxItems: 53,
    description: 'email (always there), first_name, last_name and declared contact property keys, in page order',
  }),
  double_opt_in: Type.Boolean({
    description: 'true (the default): a contact joins only after confirming by the link mailed to it',
  }),
  from: Type.Union([Type.String({ minLength: 1, maxLength: 998 }), Type.Null()], {
    description:
      "the confirmation mail's From, at a domain of the project (verified for a live form); required with double_opt_in",
  }),
  confirm_template_id: Type.Union([Type.String({ pattern: TEMPLATE_ID_PATTERN }), Type.Null()], {
    description: 'a template rendered with {confirm_url, email, first_name, last_name}; null: a built-in short message',
  }),
  redirect_url: Type.Union([Type.String({ minLength: 1, maxLength: 2000 }), Type.Null()], {
    description: 'https URL the page sends the person to (303) after a submission, instead of its own answer',
  }),
  allowed_origins: Type.Array(Type.String({ minLength: 1, maxLength: 300 }), {
    maxItems: 20,
    description: 'origins (https://example.com) whose pages may POST JSON to the form (CORS)',
  }),
};

export const CreateFormBody = Type.Object(
  {
    name: fields.name,
    audience_id: fields.audience_id,
    fields: Type.Optional(fields.fields),
    double_opt_in: Type.Optional(fields.double_opt_in),
    from: Type.Optional(fields.from),
    confirm_template_id: Type.Optional(fields.confirm_template_id),
    redirect_url: Type.Optional(fields.redirect_url),
    allowed_origins: Type.Optional(fields.allowed_origins),
  },
  { additionalProperties: false },
);
export type CreateFormBody = Static<typeof CreateFormBody>;

export const UpdateFormBody = Type.Partial(CreateFormBody, { additionalProperties: false });
export type UpdateFormBody = Static<typeof UpdateFormBody>;

export const ListFormsQuery = Type.Object(pageQueryFields('frm'), { additionalProperties: false });
