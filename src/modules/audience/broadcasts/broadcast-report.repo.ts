import type { Db } from '../../../store/db.js';

export const HOUR_MS = 3_600_000;

/** The events a broadcast's report follows over time, each counted once per email and hour. */
export const TIMELINE_EVENTS = [
  'email.delivered',
  'email.bounced',
  'email.complained',
  'email.opened',
  'email.clicked',
  'email.unsubscribed',
] as const;

/** One count of the timeline: emails with an event of `type` (or, for `email.sent`, accepted) in the hour starting at `hour`. */
export interface HourCount {
  hour: number;
  type: string;
  n: number;
}

/**
 * The broadcast's bounced recipients by the classifier's reason and type
 * (their `details`, docs/bounces.md). The details are JSON text, read here
 * rather than in SQL, which reads JSON differently on SQLite and PostgreSQL;
 * a broadcast's bounces are few beside its emails.
 */
export async function bouncesOf(db: Db, broadcastId: string): Promise<Array<{ reason: string; type: string }>> {
  const rows = await db('emails as e')
    .join('email_recipients as r', 'r.email_id', 'e.id')
    .where('e.broadcast_id', broadcastId)
    .andWhere('r.status', 'bounced')
    .select<Array<{ details: string | null }>>('r.details');
  return rows.map((r) => {
    const d = r.details ? (JSON.parse(r.details) as { reason?: string; bounce_type?: string }) : {};
    return { reason: d.reason ?? 'undefined', type: d.bounce_type ?? 'Undetermined' };
  });
}

/**
 * Per hour (integer division of the epoch milliseconds, the same on both
 * databases): the broadcast's emails accepted, and its emails with each
 * event of TIMELINE_EVENTS.
 */
export async function hourCounts(db: Db, broadcastId: string): Promise<HourCount[]> {
  // the divisor written into the SQL, not bound: SQLite would divide by a bound number as a real, and
  // PostgreSQL wants the GROUP BY expression to be the very one selected
  const hour = db.raw(`?? / ${HOUR_MS}`, ['e.created_at']);
  const sent: Array<{ hour: number | string; n: number | string }> = await db('emails as e')
    .where('e.broadcast_id', broadcastId)
    .select({ hour })
    .count({ n: '*' })
    .groupByRaw(`?? / ${HOUR_MS}`, ['e.created_at']);
  const events: Array<{ hour: number | string; type: string; n: number | string }> = await db('emails as e')
    .join('events as v', 'v.email_id', 'e.id')
    .where('e.broadcast_id', broadcastId)
    .whereIn('v.type', TIMELINE_EVENTS)
    .select({ hour: db.raw(`?? / ${HOUR_MS}`, ['v.created_at']), type: 'v.type' })
    .countDistinct({ n: 'e.id' })
    .groupByRaw(`?? / ${HOUR_MS}, ??`, ['v.created_at', 'v.type']);
  return [
    ...sent.map((r) => ({ hour: Number(r.hour) * HOUR_MS, type: 'email.sent', n: Number(r.n) })),
    ...events.map((r) => ({ hour: Number(r.hour) * HOUR_MS, type: r.type, n: Number(r.n) })),
  ];
}
