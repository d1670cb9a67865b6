import { projectRowsPage, type Db } from '../../../store/db.js';

export interface Audience {
  id: string;
  projectId: string;
  name: string;
  createdAt: number;
}

/** An audience with the number of contacts in it now. */
export interface CountedAudience extends Audience {
  contactCount: number;
}

type Row = { id: string; project_id: string; name: string; created_at: number | string };
const fromRow = (r: Row): Audience => ({
  id: r.id,
  projectId: r.project_id,
  name: r.name,
  createdAt: Number(r.created_at),
});

export async function insertAudience(db: Db, a: Audience): Promise<void> {
  await db('audiences').insert({ id: a.id, project_id: a.projectId, name: a.name, created_at: a.createdAt });
}

export async function findAudience(db: Db, projectId: string, id: string): Promise<Audience | null> {
  const row = (await db('audiences').select('*').where({ project_id: projectId, id }).first()) as Row | undefined;
  return row ? fromRow(row) : null;
}

export async function deleteAudience(db: Db, id: string): Promise<void> {
  await db('audiences').where({ id }).delete();
}

export async function renameAudience(db: Db, id: string, name: string): Promise<void> {
  await db('audiences').where({ id }).update({ name });
}

/**
 * One page, newest first (`limit + 1` rows: whether more follow); with `newerThan`, the ids above
 * it, oldest first from it (upwardPage shows them newest first).
 */
export async function pageOfAudiences(
  db: Db,
  projectId: string,
  limit: number,
  before: string | undefined,
  newerThan?: string,
): Promise<Audience[]> {
  if (newerThan === undefined)
    return (await projectRowsPage<Row>(db, 'audiences', projectId, limit, before)).map(fromRow);
  const rows = (await db('audiences')
    .select('*')
    .where({ project_id: projectId })
    .andWhere('id', '>', newerThan)
    .orderBy('id', 'asc')
    .limit(limit + 1)) as Row[];
  return rows.map(fromRow);
}

/** The project's audiences of these ids, newest first (an id not the project's is left out). */
export async function audiencesByIds(db: Db, projectId: string, ids: readonly string[]): Promise<Audience[]> {
  if (!ids.length) return [];
  const rows = (await db('audiences')
    .select('*')
    .where({ project_id: projectId })
    .whereIn('id', [...ids])
    .orderBy('id', 'desc')) as Row[];
  return rows.map(fromRow);
}

export async function contactCounts(db: Db, audienceIds: string[]): Promise<Map<string, number>> {
  const out = new Map(audienceIds.map((id) => [id, 0]));
  if (!audienceIds.length) return out;
  const rows = await db('audience_contacts')
    .select('audience_id')
    .count({ n: '*' })
    .whereIn('audience_id', audienceIds)
    .groupBy<Array<{ audience_id: string; n: number | string }>>('audience_id');
  for (const r of rows) out.set(r.audience_id, Number(r.n));
  return out;
}

/** The audiences with their contact counts. */
export async function withCounts(db: Db, audiences: Audience[]): Promise<CountedAudience[]> {
  const counts = await contactCounts(
    db,
    audiences.map((a) => a.id),
  );
  return audiences.map((a) => ({ ...a, contactCount: counts.get(a.id)! }));
}

/** Adds the contacts not in it yet (the caller holds the project's lock); returns the ids it added. */
export async function addMembers(db: Db, audienceId: string, contactIds: string[], now: number): Promise<string[]> {
  if (!contactIds.length) return [];
  const wanted = [...new Set(contactIds)];
  const present = new Set<string>();
  for (let i = 0; i < wanted.length; i += 400) {
    const rows = (await db('audience_contacts')
      .select('contact_id')
      .where({ audience_id: audienceId })
      .whereIn('contact_id', wanted.slice(i, i + 400))) as Array<{ contact_id: string }>;
    for (const r of rows) present.add(r.contact_id);
  }
  const added = wanted.filter((id) => !present.has(id));
  const rows = added.map((contact_id) => ({ audience_id: audienceId, contact_id, created_at: now }));
  for (let i = 0; i < rows.length; i += 400)
    await db('audience_contacts')
      .insert(rows.slice(i, i + 400))
      .onConflict(['audience_id', 'contact_id'])
      .ignore();
  return added;
}

/** A signup form that adds to the audience, if any (deleting the audience is refused while one does; docs/forms.md). */
export async function formUsing(
  db: Db,
  projectId: string,
  audienceId: string,
): Promise<{ id: string; name: string } | null> {
  const row = (await db('forms')
    .select('id', 'name')
    .where({ project_id: projectId, audience_id: audienceId })
    .first()) as { id: string; name: string } | undefined;
  return row ?? null;
}

export async function removeMember(db: Db, audienceId: string, contactId: string): Promise<boolean> {
  return (await db('audience_contacts').where({ audience_id: audienceId, contact_id: contactId }).delete()) > 0;
}
