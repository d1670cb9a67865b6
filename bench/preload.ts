// BENCH_PRELOAD=N: N emails of one project written straight into the appliance's SQLite file
// (better-sqlite3, one transaction, prepared statements), not through the API, before `posthorn
// serve` opens it; the migrations must have run. The rows are those the appliance writes
// (src/modules/sending/emails/emails.repo.ts, queue.repo.ts, events/events.repo.ts; ids as src/lib/ids.ts
// makes them, time-ordered with their prefixes): each email has one recipient and the events of
// its outcome. A share of them (`oldShare`) is older than the retention period, for the retention
// job to prune; a few are ambiguous, which the job keeps.
import { closeSync, fsyncSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';
import { firstIdAt, type IdKind } from '../src/lib/ids.js';

const DAY = 86_400_000;
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export interface PreloadOptions {
  /** the appliance's posthorn.sqlite, migrated, no process holding it */
  file: string;
  projectId: string;
  count: number;
  /** the share of the emails made 31 to 90 days ago; the others within the last 29 days */
  oldShare: number;
  /** the body each email stores (the bench's accept phases send the same) */
  text: string;
  now?: number;
}

export interface PreloadResult {
  emails: number;
  recipients: number;
  queue_rows: number;
  events: number;
  suppressions: number;
  /** emails the retention job may prune (older than 30 days, settled) */
  prunable: number;
  seconds: number;
}

/** An id made at `at`: the id's time, then a counter where newId puts random bits (unique, and no shared state). */
function idAt(kind: IdKind, at: number, n: number): string {
  let tail = '';
  for (let i = 0; i < 16; i++, n = Math.floor(n / 32)) tail = ALPHABET[n % 32] + tail;
  return firstIdAt(kind, at).slice(0, -16) + tail;
}

/** A local part spread over the alphabet as real addresses are (not one range the accepts append to). */
const localPart = (i: number) => `${ALPHABET[10 + (i % 22)]}.${((i * 2654435761) % 4294967296).toString(36)}`;

type Kind = 'test' | 'delivered' | 'opened' | 'bounced' | 'ambiguous';

/** What share of mail ends how: most test sends and live deliveries, some opened, 5% bounced, 0.1% ambiguous. */
function kindOf(i: number): Kind {
  const m = i % 1000;
  if (m === 999) return 'ambiguous';
  if (m >= 950) return 'bounced';
  if (m >= 650) return m >= 850 ? 'opened' : 'delivered';
  return 'test';
}

export function preload(o: PreloadOptions): PreloadResult {
  const started = performance.now();
  const now = o.now ?? Date.now();
  const db = new Database(o.file);
  // one writer, no other process: no journal while filling, the WAL again for the appliance
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -1000000');
  db.pragma('foreign_keys = OFF');
  const insert = {
    email: db.prepare(
      `insert into emails (id, project_id, environment, status, status_reason, from_header, from_domain, to_list, cc_list, bcc_list, reply_to, subject, body_html, body_text, template_id, template_version, tags, headers, request_id, scheduled_at, attempts, provider_message_id, message_id, accepted_at, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, '[]', '[]', null, ?, null, ?, null, null, '{}', '{}', ?, null, 1, ?, ?, ?, ?, ?)`,
    ),
    recipient: db.prepare(
      `insert into email_recipients (id, email_id, project_id, address, kind, status, details, delay_notified, updated_at, queue_row_id) values (?, ?, ?, ?, 'to', ?, ?, 0, ?, ?)`,
    ),
    queueRow: db.prepare(
      `insert into outbound_queue (id, email_id, project_id, route, state, attempts, next_attempt_at, lease_owner, lease_until, data_started, created_at, updated_at) values (?, ?, ?, ?, 'done', 1, ?, null, null, 1, ?, ?)`,
    ),
    event: db.prepare(
      `insert into events (id, project_id, type, email_id, recipient, simulated, data, fanned_out, created_at) values (?, ?, ?, ?, ?, ?, ?, 1, ?)`,
    ),
    suppression: db.prepare(
      `insert or ignore into suppressions (project_id, address, reason, email_id, created_at) values (?, ?, 'bounce', ?, ?)`,
    ),
  };
  const counts = { emails: 0, recipients: 0, queue_rows: 0, events: 0, suppressions: 0, prunable: 0 };
  const old = Math.round(o.count * o.oldShare);
  // the old ones spread over 59 days ending 31 days ago, the others over 29 days ending an hour ago
  const timeOf = (i: number) =>
    i < old
      ? now - 90 * DAY + (i * 59 * DAY) / Math.max(1, old)
      : now - 29 * DAY + ((i - old) * (29 * DAY - 3_600_000)) / Math.max(1, o.count - old);
  const subject = 'Order';
  const from = 'Shop <orders@shop.bench.test>';
  db.transaction(() => {
    for (let i = 0; i < o.count; i++) {
      const at = Math.floor(timeOf(i));
      const kind = kindOf(i);
      const live = kind !== 'test';
      const domain = live ? `d${i % 10}.bench.test` : 'simulator.posthorn.test';
      const address = `${localPart(i)}@${domain}`;
      const id = idAt('email', at, i);
      const requestId = idAt('request', at - 2, i);
      const messageId = `<${id.slice(4)}@mta.bench.test>`;
      const done = live ? at + 900 : at;
      const status = kind === 'ambiguous' ? 'ambiguous' : kind === 'bounced' ? 'failed' : 'accepted';
      const reason =
        kind === 'bounced'
          ? 'every recipient bounced'
          : kind === 'ambiguous'
            ? 'the receiving server did not answer after the message was transmitted; it is not sent again unless an operator retries it'
            : null;
      insert.email.run(
        id,
        o.projectId,
        live ? 'live' : 'test',
        status,
        reason,
        from,
        'shop.bench.test',
        JSON.stringify([address]),
        `${subject} ${i}`,
        o.text,
        requestId,
        kind === 'bounced' || kind === 'ambiguous' ? null : messageId,
        messageId,
        kind === 'bounced' || kind === 'ambiguous' ? null : done,
        at,
        done,
      );
      const queueRowId = idAt('queueRow', at, i);
      const recipientStatus = kind === 'test' || kind === 'opened' ? 'delivered' : kind;
      const reply =
        kind === 'test'
          ? '250 2.0.0 OK: simulated delivery'
          : kind === 'bounced'
            ? '550 5.1.1 <user>: Recipient address rejected: User unknown'
            : '250 2.0.0 Ok: queued as 4Xk2Lp0Zz1';
      const details =
        kind === 'ambiguous'
          ? { reply: 'connection lost after the end of DATA', mx: 'mx.sink.test' }
          : kind === 'bounced'
            ? { reply, bounce_type: 'Permanent', status: '5.1.1', mx: 'mx.sink.test' }
            : live
              ? { reply, mx: 'mx.sink.test' }
              : { reply };
      insert.recipient.run(
        idAt('recipient', at, i),
        id,
        o.projectId,
        address,
        recipientStatus,
        JSON.stringify(details),
        done,
        queueRowId,
      );
      counts.recipients++;
      if (live) {
        insert.queueRow.run(queueRowId, id, o.projectId, domain, at, at, done);
        counts.queue_rows++;
      }
      const event = (type: string, when: number, n: number, eventDetails: Record<string, unknown>) => {
        const data = {
          email_id: id,
          request_id: requestId,
          environment: live ? 'live' : 'test',
          from,
          subject: `${subject} ${i}`,
          tags: {},
          recipient: address,
          details: eventDetails,
        };
        insert.event.run(
          idAt('event', when, i * 4 + n),
          o.projectId,
          type,
          id,
          address,
          live ? 0 : 1,
          JSON.stringify(data),
          when,
        );
        counts.events++;
      };
      if (kind === 'bounced') {
        event('email.bounced', done, 0, {
          bounce_type: 'Permanent',
          reason: 'user_unknown',
          status: '5.1.1',
          diagnostic: reply,
          mx: 'mx.sink.test',
        });
        event('email.failed', done, 1, { reason });
        counts.suppressions += insert.suppression.run(o.projectId, address, id, done).changes;
      } else if (kind !== 'ambiguous') {
        event('email.sent', done, 0, {});
        event('email.delivered', done, 1, live ? { reply, mx: 'mx.sink.test' } : { reply });
        if (kind === 'opened') event('email.opened', done + 3000, 2, { user_agent: 'Mozilla/5.0' });
      }
      counts.emails++;
      if (i < old && kind !== 'ambiguous') counts.prunable++;
    }
  })();
  db.pragma('journal_mode = WAL');
  db.close();
  // written without syncing: on disk before the appliance starts, or the kernel's write-back of
  // gigabytes would slow the WAL's fsyncs in the phases measured next
  const fd = openSync(o.file, 'r+');
  fsyncSync(fd);
  closeSync(fd);
  return { ...counts, seconds: (performance.now() - started) / 1000 };
}
