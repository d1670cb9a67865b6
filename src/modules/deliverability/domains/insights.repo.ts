import type { Db } from '../../../store/db.js';
import type { DailyCounts, InsightCounts, StreamCounts } from './insights.js';

/**
 * Live mail of one domain of one project created since `since` (interface
 * §2.3: only live mail counts), by stream: transactional sends, and the
 * emails of broadcasts (issue 27).
 */
export async function insightCounts(db: Db, projectId: string, domain: string, since: number): Promise<StreamCounts> {
  const live = (q: ReturnType<Db>) =>
    q
      .where({ 'e.project_id': projectId, 'e.from_domain': domain, 'e.environment': 'live' })
      .andWhere('e.created_at', '>=', since);
  const bulk = db.raw('case when e.broadcast_id is null then 0 else 1 end as bulk');
  type Counted<K extends string> = Array<Record<K, string> & { bulk: number | string; n: number | string }>;
  const [emails, recipients, events] = await Promise.all([
    live(db('emails as e'))
      .select('e.status', bulk)
      .count({ n: '*' })
      .groupBy('e.status', 'bulk') as unknown as Promise<Counted<'status'>>,
    live(db('email_recipients as r').join('emails as e', 'e.id', 'r.email_id'))
      .select('r.status', bulk)
      .count({ n: '*' })
      .groupBy('r.status', 'bulk') as unknown as Promise<Counted<'status'>>,
    // Each open and click is an event row, but a recipient who opens a message three times is one
    // recipient who opened it: counted once per (email, recipient), so the rates stay within 0..1.
    db
      .from(
        live(db('events as v').join('emails as e', 'e.id', 'v.email_id'))
          .whereIn('v.type', ['email.opened', 'email.clicked'])
          .distinct('v.type', 'v.email_id', 'v.recipient', bulk)
          .as('o'),
      )
      .select('o.type', 'o.bulk')
      .count({ n: '*' })
      .groupBy('o.type', 'o.bulk') as unknown as Promise<Counted<'type'>>,
  ]);
  const of = (stream: number): InsightCounts => {
    const by = <K extends string>(rows: Counted<K>, key: K, value: string) =>
      Number(rows.find((r) => r[key] === value && Number(r.bulk) === stream)?.n ?? 0);
    return {
      messages: emails.filter((r) => Number(r.bulk) === stream).reduce((sum, r) => sum + Number(r.n), 0),
      sent: by(emails, 'status', 'accepted'),
      // a complaint comes from a recipient whose server had accepted the message
      delivered: by(recipients, 'status', 'delivered') + by(recipients, 'status', 'complained'),
      bounced: by(recipients, 'status', 'bounced'),
      complained: by(recipients, 'status', 'complained'),
      failed: by(recipients, 'status', 'failed'),
      suppressed: by(recipients, 'status', 'suppressed'),
      opened: by(events, 'type', 'email.opened'),
      clicked: by(events, 'type', 'email.clicked'),
    };
  };
  return { transactional: of(0), broadcast: of(1) };
}

const DAY_MS = 86_400_000;

/** The same live mail per UTC day of its creation, days with none left out. */
export async function insightDaily(db: Db, projectId: string, domain: string, since: number): Promise<DailyCounts[]> {
  // created_at / 86400000 divides integers on SQLite and PostgreSQL alike: the day number
  const rows = await db('email_recipients as r')
    .join('emails as e', 'e.id', 'r.email_id')
    .where({ 'e.project_id': projectId, 'e.from_domain': domain, 'e.environment': 'live' })
    .andWhere('e.created_at', '>=', since)
    .select(db.raw(`e.created_at / ${DAY_MS} as day`), 'r.status')
    .count({ n: '*' })
    .groupByRaw<Array<{ day: number | string; status: string; n: number | string }>>(
      `e.created_at / ${DAY_MS}, r.status`,
    );
  const days = new Map<number, DailyCounts>();
  for (const r of rows) {
    const day = Number(r.day);
    const d = days.get(day) ?? { day, recipients: 0, delivered: 0, bounced: 0, complained: 0, failed: 0 };
    const n = Number(r.n);
    d.recipients += n;
    // a complaint comes from a recipient whose server had accepted the message
    if (r.status === 'delivered' || r.status === 'complained') d.delivered += n;
    if (r.status === 'bounced') d.bounced += n;
    if (r.status === 'complained') d.complained += n;
    if (r.status === 'failed') d.failed += n;
    days.set(day, d);
  }
  return [...days.values()];
}

/**
 * The window's live bounces by reason (docs/bounces.md's closed set), most first: what failed —
 * unknown users, full mailboxes, a blocked IP — tells what to fix. Read from the bounced recipients'
 * details; one from before reasons were kept counts as `undefined`.
 */
export async function bouncesByReason(
  db: Db,
  projectId: string,
  domain: string,
  since: number,
): Promise<Record<string, number>> {
  const rows: Array<{ details: string | null }> = await db('email_recipients as r')
    .join('emails as e', 'e.id', 'r.email_id')
    .where({ 'e.project_id': projectId, 'e.from_domain': domain, 'e.environment': 'live', 'r.status': 'bounced' })
    .andWhere('e.created_at', '>=', since)
    .select('r.details');
  const counts = new Map<string, number>();
  for (const r of rows) {
    const reason = (r.details ? (JSON.parse(r.details) as { reason?: string }).reason : undefined) ?? 'undefined';
    counts.set(reason, (counts.get(reason) ?? 0) + 1);
  }
  return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
}
