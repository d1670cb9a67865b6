import type { Db } from '../../../store/db.js';
import type { EventType } from '../events/event-types.js';
import { payloadFormatOf, signatureFormatOf, type PayloadFormat, type SignatureFormat } from './webhook-formats.js';

// The webhook endpoints of each project; the deliveries made to them are in webhook-deliveries.repo.ts.

export interface Endpoint {
  id: string;
  projectId: string;
  url: string;
  description: string | null;
  events: EventType[];
  active: boolean;
  secret: string;
  previousSecret: string | null;
  previousSecretUntil: number | null;
  /** how its deliveries are signed (webhook-formats.ts) */
  signatureFormat: SignatureFormat;
  /** how its deliveries' bodies are shaped (webhook-formats.ts) */
  payloadFormat: PayloadFormat;
  createdAt: number;
  updatedAt: number;
}

interface EndpointRow {
  id: string;
  project_id: string;
  url: string;
  description: string | null;
  events: string;
  active: number | boolean;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: number | null;
  signature_format: string;
  payload_format: string;
  created_at: number;
  updated_at: number;
}

const ENDPOINT_COLUMNS = [
  'id',
  'project_id',
  'url',
  'description',
  'events',
  'active',
  'secret',
  'previous_secret',
  'previous_secret_until',
  'signature_format',
  'payload_format',
  'created_at',
  'updated_at',
] as const;

const endpointFromRow = (r: EndpointRow): Endpoint => ({
  id: r.id,
  projectId: r.project_id,
  url: r.url,
  description: r.description,
  events: JSON.parse(r.events) as EventType[],
  active: Boolean(r.active),
  secret: r.secret,
  previousSecret: r.previous_secret,
  previousSecretUntil: r.previous_secret_until == null ? null : Number(r.previous_secret_until),
  signatureFormat: signatureFormatOf(r.signature_format),
  payloadFormat: payloadFormatOf(r.payload_format),
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

const endpointToRow = (e: Endpoint): EndpointRow => ({
  id: e.id,
  project_id: e.projectId,
  url: e.url,
  description: e.description,
  events: JSON.stringify(e.events),
  active: e.active,
  secret: e.secret,
  previous_secret: e.previousSecret,
  previous_secret_until: e.previousSecretUntil,
  signature_format: e.signatureFormat,
  payload_format: e.payloadFormat,
  created_at: e.createdAt,
  updated_at: e.updatedAt,
});

export async function insertEndpoint(db: Db, e: Endpoint): Promise<void> {
  await db('webhook_endpoints').insert(endpointToRow(e));
}

export async function saveEndpoint(db: Db, e: Endpoint): Promise<void> {
  const { id, project_id: _p, created_at: _c, ...rest } = endpointToRow(e);
  await db('webhook_endpoints').where({ id }).update(rest);
}

export async function deleteEndpoint(db: Db, id: string): Promise<void> {
  await db('webhook_endpoints').where({ id }).delete();
}

/** Deletes an endpoint only while its url is still `url` (a listen endpoint since given an https url stays). */
export async function deleteEndpointWithUrl(db: Db, id: string, url: string): Promise<boolean> {
  return (await db('webhook_endpoints').where({ id, url }).delete()) > 0;
}

/** Deletes every endpoint whose url starts with `prefix` (no `%` or `_` in it); how many. */
export async function deleteEndpointsWithUrlPrefix(db: Db, prefix: string): Promise<number> {
  return db('webhook_endpoints').where('url', 'like', `${prefix}%`).delete();
}

/** How many endpoints of the project have a url starting with `prefix` (no `%` or `_` in it). */
export async function countEndpointsWithUrlPrefix(db: Db, projectId: string, prefix: string): Promise<number> {
  const row = (await db('webhook_endpoints')
    .where({ project_id: projectId })
    .andWhere('url', 'like', `${prefix}%`)
    .count({ n: '*' })
    .first()) as { n: number | string } | undefined;
  return Number(row?.n ?? 0);
}

/** Which of these endpoints still exist. */
export async function existingEndpointIds(db: Db, ids: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += 500) {
    const rows = (await db('webhook_endpoints')
      .select('id')
      .whereIn('id', unique.slice(i, i + 500))) as Array<{ id: string }>;
    for (const r of rows) found.add(r.id);
  }
  return found;
}

export async function findEndpoint(db: Db, projectId: string, id: string): Promise<Endpoint | null> {
  const row = (await db('webhook_endpoints').select(ENDPOINT_COLUMNS).where({ id, project_id: projectId }).first()) as
    EndpointRow | undefined;
  return row ? endpointFromRow(row) : null;
}

export async function findEndpointsById(db: Db, ids: string[]): Promise<Map<string, Endpoint>> {
  if (!ids.length) return new Map();
  const rows = (await db('webhook_endpoints')
    .select(ENDPOINT_COLUMNS)
    .whereIn('id', [...new Set(ids)])) as EndpointRow[];
  return new Map(rows.map((r) => [r.id, endpointFromRow(r)]));
}

export async function listEndpoints(db: Db, projectId: string): Promise<Endpoint[]> {
  return (
    (await db('webhook_endpoints')
      .select(ENDPOINT_COLUMNS)
      .where({ project_id: projectId })
      .orderBy('id', 'desc')) as EndpointRow[]
  ).map(endpointFromRow);
}

export async function activeEndpointsOf(db: Db, projectIds: string[]): Promise<Endpoint[]> {
  if (!projectIds.length) return [];
  return (
    (await db('webhook_endpoints')
      .select(ENDPOINT_COLUMNS)
      .whereIn('project_id', projectIds)
      .andWhere('active', true)) as EndpointRow[]
  ).map(endpointFromRow);
}
