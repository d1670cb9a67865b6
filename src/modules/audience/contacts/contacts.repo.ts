import { escapeLike, type Db } from '../../../store/db.js';
import { subscriptionsOf } from '../topics/topics.repo.js';
import type { ContactProperty, PropertyType, PropertyValue } from './contact-properties.js';

export interface Contact {
  id: string;
  projectId: string;
  /** the bare address, lower-cased */
  email: string;
  firstName: string | null;
  lastName: string | null;
  properties: Record<string, PropertyValue>;
  unsubscribed: boolean;
  /** made by a signup form and not confirmed yet (docs/forms.md): broadcasts skip it */
  pending: boolean;
  createdAt: number;
  updatedAt: number;
}

/**
 * A contact with what it belongs to: its audiences, and its subscription to
 * each topic of the project (its choice, else the topic's default).
 */
export interface ContactWithLists extends Contact {
  audiences: string[];
  topics: Record<string, boolean>;
}

interface ContactRow {
  id: string;
  project_id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  properties: string;
  unsubscribed: number | boolean;
  pending: number | boolean;
  created_at: number | string;
  updated_at: number | string;
}

const fromRow = (r: ContactRow): Contact => ({
  id: r.id,
  projectId: r.project_id,
  email: r.email,
  firstName: r.first_name,
  lastName: r.last_name,
  properties: JSON.parse(r.properties) as Record<string, PropertyValue>,
  unsubscribed: Boolean(r.unsubscribed),
  pending: Boolean(r.pending),
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

const toRow = (c: Contact): ContactRow => ({
  id: c.id,
  project_id: c.projectId,
  email: c.email,
  first_name: c.firstName,
  last_name: c.lastName,
  properties: JSON.stringify(c.properties),
  unsubscribed: c.unsubscribed,
  pending: c.pending,
  created_at: c.createdAt,
  updated_at: c.updatedAt,
});

export async function listProperties(db: Db, projectId: string): Promise<ContactProperty[]> {
  const rows = (await db('contact_properties').select('*').where({ project_id: projectId }).orderBy('key')) as Array<{
    project_id: string;
    key: string;
    type: string;
    fallback: string | null;
    created_at: number | string;
  }>;
  return rows.map((r) => ({
    projectId: r.project_id,
    key: r.key,
    type: r.type as PropertyType,
    fallback: r.fallback === null ? null : (JSON.parse(r.fallback) as PropertyValue),
    createdAt: Number(r.created_at),
  }));
}

export async function insertProperty(db: Db, p: ContactProperty): Promise<void> {
  await db('contact_properties').insert({
    project_id: p.projectId,
    key: p.key,
    type: p.type,
    fallback: p.fallback === null ? null : JSON.stringify(p.fallback),
    created_at: p.createdAt,
  });
}

export async function deleteProperty(db: Db, projectId: string, key: string): Promise<boolean> {
  return (await db('contact_properties').where({ project_id: projectId, key }).delete()) > 0;
}

export async function insertContact(db: Db, c: Contact): Promise<void> {
  await db('contacts').insert(toRow(c));
}

export async function updateContact(db: Db, c: Contact): Promise<void> {
  const { id, project_id: _p, created_at: _c, ...rest } = toRow(c);
  await db('contacts').where({ id }).update(rest);
}

/** A pending contact taken over by the operator's write (contacts.service.ts): every field anew, created now. */
export async function replaceContact(db: Db, c: Contact): Promise<void> {
  const { id, project_id: _p, ...rest } = toRow(c);
  await db('contacts').where({ id }).update(rest);
}

export async function deleteContact(db: Db, id: string): Promise<void> {
  await db('contacts').where({ id }).delete();
}

/** A contact of the project by id (con_…) or by address. */
export async function findContact(db: Db, projectId: string, idOrEmail: string): Promise<Contact | null> {
  const by = /^con_[0-9a-z]{26}$/.test(idOrEmail) ? { id: idOrEmail } : { email: idOrEmail.toLowerCase() };
  const row = (await db('contacts')
    .select('*')
    .where({ project_id: projectId, ...by })
    .first()) as ContactRow | undefined;
  return row ? fromRow(row) : null;
}

/** A contact by id, whatever its project: a preference or confirmation link names it alone. */
export async function contactById(db: Db, id: string): Promise<Contact | null> {
  const row = (await db('contacts').select('*').where({ id }).first()) as ContactRow | undefined;
  return row ? fromRow(row) : null;
}

export async function contactsByEmail(db: Db, projectId: string, emails: string[]): Promise<Contact[]> {
  if (!emails.length) return [];
  return (
    (await db('contacts').select('*').where({ project_id: projectId }).whereIn('email', emails)) as ContactRow[]
  ).map(fromRow);
}

export async function contactsById(db: Db, projectId: string, ids: string[]): Promise<Contact[]> {
  if (!ids.length) return [];
  return ((await db('contacts').select('*').where({ project_id: projectId }).whereIn('id', ids)) as ContactRow[]).map(
    fromRow,
  );
}

export interface ContactPage {
  limit: number;
  /** the id the previous page ended with: newest first, so the next page's ids are below it */
  before?: string | undefined;
  /** ids above this one, read upward from it (oldest first): the page just newer than it (Resend's `before`) */
  newerThan?: string | undefined;
  audienceId?: string | undefined;
  /** a part of the address, lower-cased */
  contains?: string | undefined;
}

/**
 * One page, newest first (with `newerThan`, oldest first from it: see upwardPage); `limit + 1`
 * rows are read so that the caller knows whether more follow.
 */
export async function pageOfContacts(db: Db, projectId: string, p: ContactPage): Promise<Contact[]> {
  const q = db('contacts as c').select('c.*').where('c.project_id', projectId);
  if (p.audienceId)
    q.whereIn('c.id', db('audience_contacts').select('contact_id').where({ audience_id: p.audienceId }));
  if (p.contains) q.andWhereRaw(`c.email like ? escape '\\'`, [`%${escapeLike(p.contains)}%`]);
  if (p.before) q.andWhere('c.id', '<', p.before);
  if (p.newerThan) q.andWhere('c.id', '>', p.newerThan);
  return ((await q.orderBy('c.id', p.newerThan ? 'asc' : 'desc').limit(p.limit + 1)) as ContactRow[]).map(fromRow);
}

/** The audiences each contact belongs to, oldest membership first. */
export async function audiencesOf(db: Db, contactIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map(contactIds.map((id) => [id, [] as string[]]));
  if (!contactIds.length) return out;
  const rows = (await db('audience_contacts')
    .select('contact_id', 'audience_id')
    .whereIn('contact_id', contactIds)
    .orderBy(['created_at', 'audience_id'])) as Array<{ contact_id: string; audience_id: string }>;
  for (const r of rows) out.get(r.contact_id)?.push(r.audience_id);
  return out;
}

/** The contacts with their audiences and their subscription to each topic, which the API shows beside each. */
export async function withLists(db: Db, projectId: string, contacts: Contact[]): Promise<ContactWithLists[]> {
  const ids = contacts.map((c) => c.id);
  const [audiences, topics] = await Promise.all([audiencesOf(db, ids), subscriptionsOf(db, projectId, ids)]);
  return contacts.map((c) => ({ ...c, audiences: audiences.get(c.id)!, topics: topics.get(c.id)! }));
}

/** The segment that reads a property or uses an audience, if any (deleting either is refused while one does). */
export async function segmentReading(
  db: Db,
  projectId: string,
  what: { property?: string; audience?: string },
): Promise<{ id: string; name: string } | null> {
  const q = db('segments').select('id', 'name', 'roots').where({ project_id: projectId });
  if (what.audience !== undefined) q.andWhere({ audience_id: what.audience });
  const rows = (await q) as Array<{ id: string; name: string; roots: string }>;
  return (
    rows.find((r) => what.property === undefined || (JSON.parse(r.roots) as string[]).includes(what.property)) ?? null
  );
}

export async function audienceExists(db: Db, projectId: string, id: string): Promise<boolean> {
  return (await db('audiences').select('id').where({ project_id: projectId, id }).first()) !== undefined;
}
