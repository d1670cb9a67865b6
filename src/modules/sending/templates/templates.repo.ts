import type { Knex } from 'knex';
import { dialectOf, type Db } from '../../../store/db.js';
import type { Template, TemplateVersion, TemplateVersionInfo } from './template.js';
import type { SplitItem } from './templates.schema.js';

interface TemplateRow {
  uid: string;
  project_id: string;
  id: string;
  name: string;
  category: string | null;
  split: string | null;
  latest_version: number;
  created_at: number;
  updated_at: number;
}

interface VersionRow {
  template_uid: string;
  version: number;
  subject: string;
  html: string | null;
  text: string | null;
  design: string | null;
  translations: string;
  variables: string;
  compiled?: string;
  restored_from: number | null;
  created_at: number;
  foreign_source: string | null;
}

const TEMPLATE_COLUMNS = [
  'uid',
  'project_id',
  'id',
  'name',
  'category',
  'split',
  'latest_version',
  'created_at',
  'updated_at',
] as const;
const VERSION_COLUMNS = [
  'template_uid',
  'version',
  'subject',
  'html',
  'text',
  'design',
  'translations',
  'variables',
  'restored_from',
  'created_at',
  'foreign_source',
] as const;

const templateFromRow = (r: TemplateRow): Template => ({
  uid: r.uid,
  projectId: r.project_id,
  id: r.id,
  name: r.name,
  category: r.category,
  split: r.split === null ? null : (JSON.parse(r.split) as SplitItem[]),
  latestVersion: Number(r.latest_version),
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

const templateToRow = (t: Template): TemplateRow => ({
  uid: t.uid,
  project_id: t.projectId,
  id: t.id,
  name: t.name,
  category: t.category,
  split: t.split === null ? null : JSON.stringify(t.split),
  latest_version: t.latestVersion,
  created_at: t.createdAt,
  updated_at: t.updatedAt,
});

const versionFromRow = (r: VersionRow, templateId: string): TemplateVersionInfo => ({
  templateUid: r.template_uid,
  templateId,
  version: Number(r.version),
  subject: r.subject,
  html: r.html,
  text: r.text,
  design: r.design === null ? null : (JSON.parse(r.design) as TemplateVersionInfo['design']),
  translations: JSON.parse(r.translations) as TemplateVersionInfo['translations'],
  variables: JSON.parse(r.variables) as TemplateVersionInfo['variables'],
  restoredFrom: r.restored_from == null ? null : Number(r.restored_from),
  createdAt: Number(r.created_at),
  foreignSource: r.foreign_source == null ? null : (JSON.parse(r.foreign_source) as unknown),
});

export async function findTemplate(db: Db, projectId: string, id: string): Promise<Template | null> {
  const row = (await db('templates').select(TEMPLATE_COLUMNS).where({ project_id: projectId, id }).first()) as
    TemplateRow | undefined;
  return row ? templateFromRow(row) : null;
}

/** The same, its row locked for the rest of the transaction on PostgreSQL (SQLite's one writer already excludes). */
export async function findTemplateForUpdate(
  trx: Knex.Transaction,
  projectId: string,
  id: string,
): Promise<Template | null> {
  const q = trx('templates').select(TEMPLATE_COLUMNS).where({ project_id: projectId, id });
  const row = (await (dialectOf(trx) === 'pg' ? q.forUpdate() : q).first()) as TemplateRow | undefined;
  return row ? templateFromRow(row) : null;
}

/** Newest first. */
export async function listTemplates(db: Db, projectId: string): Promise<Template[]> {
  const rows = (await db('templates')
    .select(TEMPLATE_COLUMNS)
    .where({ project_id: projectId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'uid', order: 'desc' },
    ])) as TemplateRow[];
  return rows.map(templateFromRow);
}

export async function insertTemplate(db: Db, t: Template): Promise<void> {
  await db('templates').insert(templateToRow(t));
}

export async function saveTemplate(db: Db, t: Template): Promise<void> {
  const { uid, project_id: _p, id: _i, created_at: _c, ...rest } = templateToRow(t);
  await db('templates').where({ uid }).update(rest);
}

export async function deleteTemplate(db: Db, uid: string): Promise<void> {
  await db('template_versions').where({ template_uid: uid }).delete();
  await db('templates').where({ uid }).delete();
}

export async function insertVersion(db: Db, v: TemplateVersion): Promise<void> {
  await db('template_versions').insert({
    template_uid: v.templateUid,
    version: v.version,
    subject: v.subject,
    html: v.html,
    text: v.text,
    design: v.design === null ? null : JSON.stringify(v.design),
    translations: JSON.stringify(v.translations),
    variables: JSON.stringify(v.variables),
    compiled: JSON.stringify(v.compiled),
    restored_from: v.restoredFrom,
    created_at: v.createdAt,
    foreign_source: v.foreignSource == null ? null : JSON.stringify(v.foreignSource),
  });
}

/** One version with what a send renders (`compiled`). */
export async function findVersion(db: Db, t: Template, version: number): Promise<TemplateVersion | null> {
  const row = (await db('template_versions')
    .select([...VERSION_COLUMNS, 'compiled'])
    .where({ template_uid: t.uid, version })
    .first()) as VersionRow | undefined;
  return row
    ? { ...versionFromRow(row, t.id), compiled: JSON.parse(row.compiled!) as TemplateVersion['compiled'] }
    : null;
}

/** Every version, newest first, without the compiled trees. */
export async function listVersions(db: Db, t: Template): Promise<TemplateVersionInfo[]> {
  const rows = (await db('template_versions')
    .select(VERSION_COLUMNS)
    .where({ template_uid: t.uid })
    .orderBy('version', 'desc')) as VersionRow[];
  return rows.map((r) => versionFromRow(r, t.id));
}

/** When each template's latest version was published, by uid (one query for a page of templates). */
export async function latestVersionTimes(db: Db, uids: string[]): Promise<Map<string, number>> {
  if (!uids.length) return new Map();
  const rows = await db('template_versions as v')
    .join('templates as t', function () {
      this.on('t.uid', '=', 'v.template_uid').andOn('t.latest_version', '=', 'v.version');
    })
    .whereIn('t.uid', uids)
    .select<Array<{ template_uid: string; created_at: number | string }>>('v.template_uid', 'v.created_at');
  return new Map(rows.map((r) => [r.template_uid, Number(r.created_at)]));
}
