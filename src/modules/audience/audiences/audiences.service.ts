import { apiError, notFound, validationError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import { idPage, type Page } from '../../../lib/page.js';
import type { Clock } from '../../../lib/time.js';
import type { Store } from '../../../store/store.js';
import { insertEvents, type OutboxEvent } from '../../notifying/events/events.repo.js';
import { contactAddress, contactEvent, createContact, isContactId, presented } from '../contacts/contacts.service.js';
import type { CreateContactBody } from '../contacts/contacts.schema.js';
import { broadcastUsing } from '../topics/list-users.repo.js';
import {
  contactsByEmail,
  contactsById,
  findContact,
  insertContact,
  segmentReading,
  updateContact,
  type Contact,
} from '../contacts/contacts.repo.js';
import { lockRows } from '../../../store/db.js';
import { upwardPage } from '../contacts/upward-page.js';
import * as repo from './audiences.repo.js';
import type { Audience, CountedAudience } from './audiences.repo.js';
import type { AddContactsBody } from './audiences.schema.js';

export interface AudienceDeps {
  store: Store;
  clock: Clock;
}

async function existing(deps: AudienceDeps, projectId: string, id: string, db = deps.store.knex): Promise<Audience> {
  const a = await repo.findAudience(db, projectId, id);
  if (!a) throw notFound(`audience ${id}`);
  return a;
}

/**
 * POST /v1/audiences/{id}/contacts: the contacts named by id (each must be
 * the project's: 404 naming it otherwise) or by address (a contact is made
 * for an address the project does not have, with contact.created), added
 * once each, in one transaction. A pending contact named is vouched for by
 * the operator: no longer pending, and announced now (contact.created).
 */
async function addContacts(
  deps: AudienceDeps,
  projectId: string,
  id: string,
  body: AddContactsBody,
): Promise<{ audience: CountedAudience; added: number; createdContacts: number }> {
  if (!body.contact_ids && !body.emails) throw validationError('contact_ids', 'give contact_ids or emails');
  const emails = (body.emails ?? []).map((e, i) => contactAddress(e, `emails[${i}]`));
  return deps.store.tx(async (trx) => {
    // the lock creating a contact takes (contacts.service.ts): two requests never make the same address
    await lockRows(trx, 'projects', [projectId]);
    const a = await existing(deps, projectId, id, trx);
    const now = deps.clock.now();
    const byId = await contactsById(trx, projectId, body.contact_ids ?? []);
    const missing = (body.contact_ids ?? []).find((c) => !byId.some((x) => x.id === c));
    if (missing) throw notFound(`contact ${missing}`);
    const known = await contactsByEmail(trx, projectId, emails);
    const named = [...byId, ...known].filter((c, i, all) => all.findIndex((x) => x.id === c.id) === i);
    const made: Contact[] = [...new Set(emails)]
      .filter((e) => !known.some((k) => k.email === e))
      .map((email) => ({
        id: newId('contact', now),
        projectId,
        email,
        firstName: null,
        lastName: null,
        properties: {},
        unsubscribed: false,
        pending: false,
        createdAt: now,
        updatedAt: now,
      }));
    for (const c of made) await insertContact(trx, c);
    const vouched = named.filter((c) => c.pending).map((c) => ({ ...c, pending: false, updatedAt: now }));
    for (const c of vouched) await updateContact(trx, c);
    const added = new Set(
      await repo.addMembers(
        trx,
        a.id,
        [...named, ...made].map((c) => c.id),
        now,
      ),
    );
    // the contacts made or vouched for are created; those that were there already and joined are updated (their audiences changed)
    const joined = named.filter((c) => added.has(c.id) && !c.pending);
    const events: OutboxEvent[] = [
      ...(await presented(trx, projectId, [...made, ...vouched])).map((shown) =>
        contactEvent('contact.created', shown, projectId, now),
      ),
      ...(await presented(trx, projectId, joined)).map((shown) =>
        contactEvent('contact.updated', shown, projectId, now),
      ),
    ];
    await insertEvents(trx, events);
    return { audience: (await repo.withCounts(trx, [a]))[0], added: added.size, createdContacts: made.length };
  });
}

/** DELETE /v1/audiences/{id}: refused (409) while a segment, a form or a broadcast uses it; answers what it was. */
function deleteUnused(deps: AudienceDeps, projectId: string, id: string): Promise<Audience> {
  return deps.store.tx(async (trx) => {
    // the same lock a segment's creation takes: none can start using the audience meanwhile
    await lockRows(trx, 'projects', [projectId]);
    const a = await existing(deps, projectId, id, trx);
    const user = await segmentReading(trx, projectId, { audience: a.id });
    if (user)
      throw apiError(
        'conflict',
        `segment ${user.id} (${user.name}) uses the audience ${a.id}; delete or change it first`,
      );
    const form = await repo.formUsing(trx, projectId, a.id);
    if (form)
      throw apiError(
        'conflict',
        `form ${form.id} (${form.name}) adds to the audience ${a.id}; delete or change it first`,
      );
    const broadcast = await broadcastUsing(trx, projectId, { audience: a.id });
    if (broadcast)
      throw apiError(
        'conflict',
        `broadcast ${broadcast.id} (${broadcast.name}) sends to the audience ${a.id}; cancel or change it first`,
      );
    // its contacts stay: an audience is a list of them, not their owner
    await repo.deleteAudience(trx, a.id);
    return a;
  });
}

/** DELETE /v1/audiences/{id}/contacts/{contact}: by id or address; the contact stays, updated (contact.updated). */
async function removeContact(
  deps: AudienceDeps,
  projectId: string,
  id: string,
  contact: string,
): Promise<{ audience: Audience; contact: Contact }> {
  const a = await existing(deps, projectId, id);
  const c = await findContact(
    deps.store.knex,
    projectId,
    isContactId(contact) ? contact : contactAddress(contact, 'contact'),
  );
  if (!c) throw notFound(`contact ${contact}`);
  await deps.store.tx(async (trx) => {
    if (!(await repo.removeMember(trx, a.id, c.id)))
      throw apiError('not_found', `contact ${contact} is not in audience ${id}`);
    const [shown] = await presented(trx, projectId, [c]);
    await insertEvents(trx, [contactEvent('contact.updated', shown, projectId, deps.clock.now())]);
  });
  return { audience: a, contact: c };
}

export function audienceService(deps: AudienceDeps) {
  return {
    create: async (projectId: string, name: string): Promise<CountedAudience> => {
      const a: Audience = { id: newId('audience', deps.clock.now()), projectId, name, createdAt: deps.clock.now() };
      await deps.store.tx((trx) => repo.insertAudience(trx, a));
      return { ...a, contactCount: 0 };
    },
    get: async (projectId: string, id: string): Promise<CountedAudience> =>
      (await repo.withCounts(deps.store.knex, [await existing(deps, projectId, id)]))[0],
    /** With `newerThan` (Resend's `before`), the page just newer than that id instead of `cursor`'s older one. */
    list: async (
      projectId: string,
      limit: number,
      cursor: string | undefined,
      newerThan?: string,
    ): Promise<Page<CountedAudience>> => {
      const rows = await repo.pageOfAudiences(deps.store.knex, projectId, limit, cursor, newerThan);
      const page = newerThan === undefined ? idPage(rows, limit) : upwardPage(rows, limit);
      return { items: await repo.withCounts(deps.store.knex, page.items), nextCursor: page.nextCursor };
    },
    /** The project's audiences of these ids (a contact's), newest first. */
    several: (projectId: string, ids: readonly string[]): Promise<Audience[]> =>
      repo.audiencesByIds(deps.store.knex, projectId, ids),
    rename: (projectId: string, id: string, name: string): Promise<Audience> =>
      deps.store.tx(async (trx) => {
        const a = await existing(deps, projectId, id, trx);
        await repo.renameAudience(trx, a.id, name);
        return { ...a, name };
      }),
    /**
     * POST /v1/contacts's create (with `upsert`, the address's contact changed), the contact
     * joining these audiences in its transaction (404 naming one not the project's): Resend's
     * create with `segments`, and its legacy create in an audience.
     */
    createContactIn: (projectId: string, body: CreateContactBody, upsert: boolean, audienceIds: readonly string[]) =>
      createContact(deps, projectId, body, upsert, async (trx, c, now) => {
        for (const id of audienceIds)
          await repo.addMembers(trx, (await existing(deps, projectId, id, trx)).id, [c.id], now);
      }),
    delete: (projectId: string, id: string) => deleteUnused(deps, projectId, id),
    addContacts: (projectId: string, id: string, body: AddContactsBody) => addContacts(deps, projectId, id, body),
    removeContact: (projectId: string, id: string, contact: string) => removeContact(deps, projectId, id, contact),
  };
}

export type AudienceService = ReturnType<typeof audienceService>;
