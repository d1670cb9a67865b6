import type { Db } from '../../store/store.js';
import { insertRows } from '../../store/insert-rows.js';
import type { EventType } from './event-types.js';

/** One row of the outbox: written in the transaction of the change it reports. */
export interface OutboxEvent {
  id: string;
  projectId: string;
  type: EventType;
  emailId: string | null;
  recipient: string | null;
  simulated: boolean;
  /** the payload's `data` (interface §6) */
  data: Record<string, unknown>;
  createdAt: number;
}

export async function insertEvents(db: Db, events: OutboxEvent[]): Promise<void> {
  await insertRows(
    db,
    'events',
    events.map((e) => ({
        id: e.id,
        project_id: e.projectId,
        type: e.type,
        email_id: e.emailId,
        recipient: e.recipient,
        simulated: e.simulated,
        data: JSON.stringify(e.data),
      fanned_out: false,
      created_at: e.createdAt,
    })),
  );
}

export async function eventsOfEmail(db: Db, emailId: string): Promise<OutboxEvent[]> {
  const rows = (await db('events')
    .select('id', 'project_id', 'type', 'email_id', 'recipient', 'simulated', 'data', 'created_at')
    .where({ email_id: emailId })
    .orderBy('id', 'asc')) as Array<{ id: string; project_id: string; type: EventType; email_id: string | null; recipient: string | null; simulated: number | boolean; data: string; created_at: number }>;
  return rows.map((r) => ({
    id: r.id,
    projectId: r.project_id,
    type: r.type,
    emailId: r.email_id,
    recipient: r.recipient,
    simulated: Boolean(r.simulated),
    data: JSON.parse(r.data) as Record<string, unknown>,
    createdAt: Number(r.created_at),
  }));
}
