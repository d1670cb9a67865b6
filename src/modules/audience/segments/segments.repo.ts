import { projectRowsPage, type Db } from '../../../store/db.js';
import type { CompiledCondition } from '../../sending/templates/language/index.js';

export interface Segment {
  id: string;
  projectId: string;
  name: string;
  audienceId: string | null;
  filter: string;
  compiled: CompiledCondition;
  roots: string[];
  createdAt: number;
}

type Row = {
  id: string;
  project_id: string;
  name: string;
  audience_id: string | null;
  filter: string;
  compiled: string;
  roots: string;
  created_at: number | string;
};
const fromRow = (r: Row): Segment => ({
  id: r.id,
  projectId: r.project_id,
  name: r.name,
  audienceId: r.audience_id,
  filter: r.filter,
  compiled: JSON.parse(r.compiled) as CompiledCondition,
  roots: JSON.parse(r.roots) as string[],
  createdAt: Number(r.created_at),
});

export async function insertSegment(db: Db, s: Segment): Promise<void> {
  await db('segments').insert({
    id: s.id,
    project_id: s.projectId,
    name: s.name,
    audience_id: s.audienceId,
    filter: s.filter,
    compiled: JSON.stringify(s.compiled),
    roots: JSON.stringify(s.roots),
    created_at: s.createdAt,
  });
}

export async function findSegment(db: Db, projectId: string, id: string): Promise<Segment | null> {
  const row = (await db('segments').select('*').where({ project_id: projectId, id }).first()) as Row | undefined;
  return row ? fromRow(row) : null;
}

/** One page, newest first (`limit + 1` rows: whether more follow). */
export async function pageOfSegments(
  db: Db,
  projectId: string,
  limit: number,
  before: string | undefined,
): Promise<Segment[]> {
  return (await projectRowsPage<Row>(db, 'segments', projectId, limit, before)).map(fromRow);
}

export async function deleteSegment(db: Db, id: string): Promise<void> {
  await db('segments').where({ id }).delete();
}
