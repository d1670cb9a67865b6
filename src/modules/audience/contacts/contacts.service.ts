import type { Knex } from 'knex';
import { parseAddress } from '../../../lib/address.js';
import { apiError, notFound, validationError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import { idPage, type Page } from '../../../lib/page.js';
import type { Clock } from '../../../lib/time.js';
import { isUniqueViolation, lockRows } from '../../../store/db.js';
import type { Store } from '../../../store/store.js';
import { insertEvents, type OutboxEvent } from '../../notifying/events/events.repo.js';
import type { EventType } from '../../notifying/events/event-types.js';
import { applyProperties, type ContactProperty } from './contact-properties.js';
import { createProperty, deleteProperty } from './contact-properties.service.js';
import { presentContact } from './contacts.presenter.js';
import { setSubscriptions, topicsOfProject } from '../topics/topics.repo.js';
import * as repo from './contacts.repo.js';
import { upwardPage } from './upward-page.js';
import type { Contact, ContactWithLists } from './contacts.repo.js';
import type { CreateContactBody, CreatePropertyBody, UpdateContactBody } from './contacts.schema.js';

export interface ContactDeps {
  store: Store;
  clock: Clock;
}

/** A contact's id, as opposed to an address (which may start with con_ too). */
export const isContactId = (s: string) => /^con_[0-9a-z]{26}$/.test(s);

/** Contacts are kept as the accept compares addresses: bare, lower-cased, the domain an A-label. */
export function contactAddress(input: string, field = 'email'): string {
  const parsed = parseAddress(input);
  if (!parsed.ok) throw validationError(field, parsed.reason);
  return parsed.value.address.toLowerCase();
}

/** contact.created / updated / deleted: an event of no email, with the contact as the API shows it. */
export function contactEvent(
  type: Extract<EventType, `contact.${string}`>,
  shown: ReturnType<typeof presentContact>,
  projectId: string,
  now: number,
): OutboxEvent {
  return {
    id: newId('event', now),
    projectId,
    type,
    emailId: null,
    recipient: shown.email,
    simulated: false,
    data: shown,
    createdAt: now,
  };
}

/** Contacts as the API shows them: the data of their contact.* events. */
export async function presented(db: Knex.Transaction | Store['knex'], projectId: string, contacts: Contact[]) {
  return (await repo.withLists(db, projectId, contacts)).map(presentContact);
}

/** A contact's choices of topics: each must be a topic of the project (400 naming it). */
async function chooseTopics(
  trx: Knex.Transaction,
  c: Contact,
  choices: Record<string, boolean> | undefined,
  now: number,
): Promise<void> {
  if (!choices || !Object.keys(choices).length) return;
  const known = new Set((await topicsOfProject(trx, c.projectId)).map((t) => t.id));
  const unknown = Object.keys(choices).find((id) => !known.has(id));
  if (unknown) throw validationError(`topics.${unknown}`, 'is not a topic of this project');
  await setSubscriptions(trx, c.id, choices, now);
}

/**
 * More a create does in its transaction, under the project's lock, once the contact is stored and
 * before it is announced (the audiences it joins: audiences.service.ts).
 */
export type AlsoOnCreate = (trx: Knex.Transaction, c: Contact, now: number) => Promise<void>;

async function declared(
  db: Knex.Transaction | Store['knex'],
  projectId: string,
): Promise<Map<string, ContactProperty>> {
  return new Map((await repo.listProperties(db, projectId)).map((p) => [p.key, p]));
}

/**
 * The contact `body` describes, as new (`current` null) or as `current`
 * changed; errors name the field. Every caller writes for the operator (the
 * API, the CSV import), who vouches for the contact: it is no longer pending.
 */
export function merged(
  projectId: string,
  current: Contact | null,
  body: UpdateContactBody,
  props: Map<string, ContactProperty>,
  now: number,
): Contact {
  const base: Contact = current ?? {
    id: newId('contact', now),
    projectId,
    email: '',
    firstName: null,
    lastName: null,
    properties: {},
    unsubscribed: false,
    pending: false,
    createdAt: now,
    updatedAt: now,
  };
  const properties = applyProperties(props, base.properties, body.properties ?? {});
  if (!properties.ok) throw validationError(properties.field, properties.reason);
  return {
    ...base,
    email: body.email !== undefined ? contactAddress(body.email) : base.email,
    firstName: body.first_name !== undefined ? body.first_name : base.firstName,
    lastName: body.last_name !== undefined ? body.last_name : base.lastName,
    properties: properties.properties,
    unsubscribed: body.unsubscribed ?? base.unsubscribed,
    pending: false,
    updatedAt: now,
  };
}

/**
 * What an operator's create finds at an address: a contact, or none. A
 * pending contact is a signup nobody confirmed, typed by anyone: not a
 * contact the operator has made, so a create replaces it (keeping its id,
 * which its signup's link names), as new.
 */
export const operatorsContact = (found: Contact | null) => (found && !found.pending ? found : null);

/**
 * POST /v1/contacts: a new contact (201), or with `upsert` the contact of
 * that address changed (200). The address is unique in the project: 409
 * contact_exists otherwise, also when two requests race (the unique index).
 * A pending contact counts as none (operatorsContact).
 */
export async function createContact(
  deps: ContactDeps,
  projectId: string,
  body: CreateContactBody,
  upsert: boolean,
  also?: AlsoOnCreate,
): Promise<{ contact: ContactWithLists; created: boolean }> {
  const email = contactAddress(body.email);
  try {
    return await deps.store.tx(async (trx) => {
      await lockRows(trx, 'projects', [projectId]);
      const now = deps.clock.now();
      const found = await repo.findContact(trx, projectId, email);
      const existing = operatorsContact(found);
      if (existing && !upsert)
        throw apiError(
          'contact_exists',
          `a contact with the address ${email} exists (${existing.id}); PATCH it, or POST with ?upsert=true`,
        );
      const c = {
        ...merged(projectId, existing, { ...body, email }, await declared(trx, projectId), now),
        ...(found && !existing ? { id: found.id } : {}),
      };
      if (existing) await repo.updateContact(trx, c);
      else if (found) await repo.replaceContact(trx, c);
      else await repo.insertContact(trx, c);
      await chooseTopics(trx, c, body.topics, now);
      if (also) await also(trx, c, now);
      const [full] = await repo.withLists(trx, projectId, [c]);
      const type = existing ? 'contact.updated' : 'contact.created';
      await insertEvents(trx, [contactEvent(type, presentContact(full), projectId, now)]);
      return { contact: full, created: !existing };
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw apiError('contact_exists', `a contact with the address ${email} exists`);
    throw e;
  }
}

export async function getContact(deps: ContactDeps, projectId: string, idOrEmail: string): Promise<ContactWithLists> {
  const c = await repo.findContact(deps.store.reader, projectId, lookupKey(idOrEmail));
  if (!c) throw notFound(`contact ${idOrEmail}`);
  return (await repo.withLists(deps.store.reader, projectId, [c]))[0];
}

/** An id as given, an address as the contacts keep it (a path may carry any spelling of it). */
const lookupKey = (idOrEmail: string) =>
  isContactId(idOrEmail) ? idOrEmail : parseAddress(idOrEmail).ok ? contactAddress(idOrEmail) : idOrEmail.toLowerCase();

export async function updateContactOf(
  deps: ContactDeps,
  projectId: string,
  idOrEmail: string,
  body: UpdateContactBody,
): Promise<ContactWithLists> {
  try {
    return await deps.store.tx(async (trx) => {
      const current = await repo.findContact(trx, projectId, lookupKey(idOrEmail));
      if (!current) throw notFound(`contact ${idOrEmail}`);
      const now = deps.clock.now();
      const c = merged(projectId, current, body, await declared(trx, projectId), now);
      await repo.updateContact(trx, c);
      await chooseTopics(trx, c, body.topics, now);
      const [full] = await repo.withLists(trx, projectId, [c]);
      // a pending contact was never announced: the operator's change makes it one, so it is created now
      await insertEvents(trx, [
        contactEvent(current.pending ? 'contact.created' : 'contact.updated', presentContact(full), projectId, now),
      ]);
      return full;
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw apiError('contact_exists', `another contact has the address ${body.email}`);
    throw e;
  }
}

/** Deletes the contact and answers what it was. */
export async function deleteContactOf(deps: ContactDeps, projectId: string, idOrEmail: string): Promise<Contact> {
  return deps.store.tx(async (trx) => {
    const c = await repo.findContact(trx, projectId, lookupKey(idOrEmail));
    if (!c) throw notFound(`contact ${idOrEmail}`);
    const [shown] = await presented(trx, projectId, [c]);
    await repo.deleteContact(trx, c.id);
    // nobody was told of a pending contact, so nobody is told it went (as when it is pruned)
    if (!c.pending) await insertEvents(trx, [contactEvent('contact.deleted', shown, projectId, deps.clock.now())]);
    return c;
  });
}

export async function listContacts(
  deps: ContactDeps,
  projectId: string,
  q: {
    limit: number;
    cursor?: string | undefined;
    /** the page just newer than this id, instead of `cursor`'s older one (Resend's `before`) */
    newerThan?: string | undefined;
    audience_id?: string | undefined;
    email?: string | undefined;
  },
): Promise<Page<ContactWithLists>> {
  if (q.audience_id && !(await repo.audienceExists(deps.store.reader, projectId, q.audience_id)))
    throw notFound(`audience ${q.audience_id}`);
  const rows = await repo.pageOfContacts(deps.store.reader, projectId, {
    limit: q.limit,
    before: q.cursor,
    newerThan: q.newerThan,
    audienceId: q.audience_id,
    contains: q.email?.toLowerCase(),
  });
  const page = q.newerThan ? upwardPage(rows, q.limit) : idPage(rows, q.limit);
  return { items: await repo.withLists(deps.store.reader, projectId, page.items), nextCursor: page.nextCursor };
}

export function contactService(deps: ContactDeps) {
  return {
    create: (projectId: string, body: CreateContactBody, upsert: boolean) =>
      createContact(deps, projectId, body, upsert),
    get: (projectId: string, idOrEmail: string) => getContact(deps, projectId, idOrEmail),
    update: (projectId: string, idOrEmail: string, body: UpdateContactBody) =>
      updateContactOf(deps, projectId, idOrEmail, body),
    delete: (projectId: string, idOrEmail: string) => deleteContactOf(deps, projectId, idOrEmail),
    list: (projectId: string, q: Parameters<typeof listContacts>[2]) => listContacts(deps, projectId, q),
    createProperty: (projectId: string, body: CreatePropertyBody) => createProperty(deps, projectId, body),
    listProperties: (projectId: string): Promise<ContactProperty[]> =>
      repo.listProperties(deps.store.reader, projectId),
    deleteProperty: (projectId: string, key: string) => deleteProperty(deps, projectId, key),
  };
}

export type ContactService = ReturnType<typeof contactService>;
