import { Type, type Static } from '@sinclair/typebox';
import { validationError } from '../../../lib/errors.js';
import { StringEnum } from '../../../lib/schema.js';
import { iso } from '../../../lib/time.js';
import { validateBody } from '../../../lib/validate.js';
import type { PropertyValue } from '../../audience/contacts/contact-properties.js';
import type { Contact } from '../../audience/contacts/contacts.repo.js';
import { CreateContactBody, UpdateContactBody } from '../../audience/contacts/contacts.schema.js';

// Resend's contacts (POST/GET/PATCH/DELETE /contacts, the legacy /audiences/{id}/contacts) and
// how they become ours: `first_name`, `last_name`, `unsubscribed` (out of all broadcast mail) and
// `properties` are our contact's own; `segments: [{id}]` are audiences the contact joins;
// `topics: [{id, subscription}]` are its choices, `opt_in` subscribed. Fields Resend's API does not
// know are ignored, as Resend ignores them; each body is then checked as POST /v1/contacts checks it.

const Subscription = StringEnum(['opt_in', 'opt_out'] as const);
/** One of a contact's topic choices, as Resend's body has it. */
export const ResendTopicChoice = Type.Object(
  { id: Type.String({ minLength: 1 }), subscription: Subscription },
  { additionalProperties: true },
);
export type ResendTopicChoice = Static<typeof ResendTopicChoice>;

const Name = Type.Union([Type.String(), Type.Null()]);
const fields = {
  first_name: Type.Optional(Name),
  last_name: Type.Optional(Name),
  unsubscribed: Type.Optional(Type.Boolean()),
  properties: Type.Optional(
    Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()])),
  ),
};

/**
 * PATCH /contacts/{id or email} and /audiences/{id}/contacts/{id or email}: `null` clears a name or
 * a property; `email` (which Resend's Go SDK sends) is the contact's new address.
 */
export const ResendContactUpdateBody = Type.Object(
  { email: Type.Optional(Type.String()), ...fields },
  { additionalProperties: true },
);
export type ResendContactUpdateBody = Static<typeof ResendContactUpdateBody>;

/** POST /contacts (and, without segments or topics, POST /audiences/{id}/contacts). */
export const ResendContactBody = Type.Object(
  {
    email: Type.String(),
    ...fields,
    segments: Type.Optional(
      Type.Array(Type.Object({ id: Type.String({ minLength: 1 }) }, { additionalProperties: true })),
    ),
    topics: Type.Optional(Type.Array(ResendTopicChoice)),
  },
  { additionalProperties: true },
);
export type ResendContactBody = Static<typeof ResendContactBody>;

/** PATCH /contacts/{id or email}/topics: the SDK sends a bare array; Resend's docs name a `topics` field. */
export const ResendContactTopicsBody = Type.Union([
  Type.Array(ResendTopicChoice),
  Type.Object({ topics: Type.Array(ResendTopicChoice) }, { additionalProperties: true }),
]);
export type ResendContactTopicsBody = Static<typeof ResendContactTopicsBody>;

/** The choices of either shape of PATCH /contacts/{x}/topics. */
export const choicesIn = (b: ResendContactTopicsBody): ResendTopicChoice[] => (Array.isArray(b) ? b : b.topics);

/**
 * Resend's topic choices as ours (`{topic id: subscribed}`): `opt_in` is subscribed, `opt_out`
 * not. A topic named twice must be given the same answer.
 */
export function topicChoicesOf(choices: readonly ResendTopicChoice[]): Record<string, boolean> {
  const out = new Map<string, boolean>();
  choices.forEach((c, i) => {
    const subscribed = c.subscription === 'opt_in';
    if (out.has(c.id) && out.get(c.id) !== subscribed)
      throw validationError(`topics[${i}].subscription`, `contradicts the earlier choice for the topic ${c.id}`);
    out.set(c.id, subscribed);
  });
  return Object.fromEntries(out);
}

/** The fields given, without those the client left out. */
function given<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Resend's new contact as POST /v1/contacts's body, and the audiences (Resend's segments) it joins. */
export function fromResendContact(b: ResendContactBody): { body: CreateContactBody; audienceIds: string[] } {
  const body = given({
    email: b.email,
    first_name: b.first_name,
    last_name: b.last_name,
    unsubscribed: b.unsubscribed,
    properties: b.properties,
    topics: b.topics === undefined ? undefined : topicChoicesOf(b.topics),
  });
  return {
    body: validateBody<CreateContactBody>(CreateContactBody, body),
    audienceIds: [...new Set((b.segments ?? []).map((s) => s.id))],
  };
}

/** Resend's change of a contact as PATCH /v1/contacts/{contact}'s body. */
export function fromResendContactUpdate(b: ResendContactUpdateBody): UpdateContactBody {
  const body = given({
    email: b.email,
    first_name: b.first_name,
    last_name: b.last_name,
    unsubscribed: b.unsubscribed,
    properties: b.properties,
  });
  return validateBody<UpdateContactBody>(UpdateContactBody, body);
}

/** A contact of Resend's lists (GET /contacts, GET /segments/{id}/contacts). */
export function resendListedContact(c: Contact) {
  return {
    id: c.id,
    email: c.email,
    first_name: c.firstName,
    last_name: c.lastName,
    unsubscribed: c.unsubscribed,
    created_at: iso(c.createdAt),
  };
}

/**
 * GET /contacts/{id or email}: Resend shows each property as `{type, value}`; a boolean property
 * of ours (Resend has none) shows `type: 'boolean'`, a date its ISO 8601 text as a string.
 */
export function resendContact(c: Contact) {
  return { object: 'contact' as const, ...resendListedContact(c), properties: resendProperties(c.properties) };
}

export function resendProperties(properties: Readonly<Record<string, PropertyValue>>) {
  return Object.fromEntries(
    Object.entries(properties).map(([key, value]) => [
      key,
      { type: typeof value as 'string' | 'number' | 'boolean', value },
    ]),
  );
}

/** Resend's answer to DELETE of a contact: its id under `contact` (and `id`, which Resend's Go SDK reads). */
export const resendDeletedContact = (c: { id: string }) => ({
  object: 'contact' as const,
  id: c.id,
  contact: c.id,
  deleted: true as const,
});
