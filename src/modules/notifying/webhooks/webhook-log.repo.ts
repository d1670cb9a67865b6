import type { Db } from '../../../store/db.js';
import {
  DELIVERY_COLUMNS,
  deliveryFromRow,
  type AttemptRecord,
  type DeliveryRow,
  type WebhookDelivery,
} from './webhook-deliveries.repo.js';

// What the delivery log and an email's timeline read of the webhook deliveries and their attempts;
// the dispatcher's writes are in webhook-deliveries.repo.ts.

/** A delivery as its endpoint's log shows it: with its event's type and email (null once the event is pruned, or about no email). */
export type LoggedDelivery = WebhookDelivery & { eventType: string | null; emailId: string | null };

export async function deliveriesOfEndpoint(
  db: Db,
  endpointId: string,
  limit: number,
  before?: string,
): Promise<LoggedDelivery[]> {
  const q = db('webhook_deliveries as d')
    .leftJoin('events as ev', 'ev.id', 'd.event_id')
    .select([...DELIVERY_COLUMNS.map((c) => `d.${c}`), 'ev.type as event_type', 'ev.email_id as event_email_id'])
    .where('d.endpoint_id', endpointId);
  if (before) q.andWhere('d.id', '<', before);
  const rows = (await q.orderBy('d.id', 'desc').limit(limit)) as Array<
    DeliveryRow & { event_type: string | null; event_email_id: string | null }
  >;
  return rows.map((r) => ({ ...deliveryFromRow(r), eventType: r.event_type, emailId: r.event_email_id }));
}

/** The deliveries made of some events, oldest first (an email's timeline shows where its events went). */
export async function deliveriesOfEvents(db: Db, projectId: string, eventIds: string[]): Promise<WebhookDelivery[]> {
  if (!eventIds.length) return [];
  const rows = (await db('webhook_deliveries')
    .select(DELIVERY_COLUMNS)
    .where({ project_id: projectId })
    .whereIn('event_id', eventIds)
    .orderBy('id')) as DeliveryRow[];
  return rows.map(deliveryFromRow);
}

export async function attemptsOf(db: Db, deliveryIds: string[]): Promise<Map<string, AttemptRecord[]>> {
  const out = new Map<string, AttemptRecord[]>(deliveryIds.map((id) => [id, []]));
  if (!deliveryIds.length) return out;
  const rows = (await db('webhook_attempts')
    .select('delivery_id', 'attempt', 'status_code', 'duration_ms', 'error', 'response_body', 'created_at')
    .whereIn('delivery_id', deliveryIds)
    .orderBy('attempt')) as Array<{
    delivery_id: string;
    attempt: number;
    status_code: number | null;
    duration_ms: number;
    error: string | null;
    response_body: string | null;
    created_at: number;
  }>;
  for (const r of rows) {
    out.get(r.delivery_id)!.push({
      deliveryId: r.delivery_id,
      attempt: Number(r.attempt),
      statusCode: r.status_code == null ? null : Number(r.status_code),
      durationMs: Number(r.duration_ms),
      error: r.error,
      responseBody: r.response_body,
      createdAt: Number(r.created_at),
    });
  }
  return out;
}
