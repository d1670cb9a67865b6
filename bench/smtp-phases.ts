// Issue 21's figures: bounce DSNs received and applied per second on the MX listener, and messages
// accepted durably per second over SMTP submission, each over 64 reused connections (BENCH_SMTP_CONNECTIONS) that pipeline (test/helpers/smtp-pipelined.ts).
import Database from 'better-sqlite3';
import { SmtpSession } from '../test/helpers/smtp-pipelined.js';
import type { SinkMessage } from '../test/helpers/smtp-sink.js';
import { deliveryStatus } from '../test/fixtures/report-builders.js';

const CONNECTIONS = Number(process.env.BENCH_SMTP_CONNECTIONS ?? 64);

/** Sends every message over CONNECTIONS sessions; the rate counts messages the listener answered 250. */
async function blast(
  port: number,
  messages: Array<{ from: string; to: string[]; raw: string }>,
  auth?: { user: string; pass: string },
): Promise<{ rate: number; n: number; errors: number; wall: number }> {
  const sessions = await Promise.all(Array.from({ length: CONNECTIONS }, () => SmtpSession.open(port, auth)));
  let next = 0;
  let errors = 0;
  const t0 = performance.now();
  await Promise.all(
    sessions.map(async (session) => {
      while (next < messages.length) {
        const m = messages[next++];
        if (!(await session.send(m.from, m.to, m.raw)).startsWith('250')) errors++;
      }
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  await Promise.all(sessions.map((s) => s.close()));
  return { rate: (messages.length - errors) / wall, n: messages.length, errors, wall };
}

/**
 * One "failed" DSN (5.7.1, a blocklist: bounced, not suppressed) per delivered live message, to the
 * VERP address it went out with. Every DSN changes a recipient: the figure is of reports applied.
 */
export async function inboundPhase(o: { port: number; delivered: SinkMessage[]; dbFile: string }) {
  const messages = o.delivered.map((m) => ({
    from: '',
    to: [m.envelope.from],
    raw: deliveryStatus({
      to: m.envelope.from,
      recipient: m.envelope.to[0],
      status: '5.7.1',
      diagnostic: 'smtp; 554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org',
      original: m.raw.toString('utf8'),
    }),
  }));
  const before = bouncedCount(o.dbFile);
  const r = await blast(o.port, messages);
  return { ...r, applied: bouncedCount(o.dbFile) - before };
}

/** Distinct small messages with a test key (simulated, like accept_test_key): the SMTP side of the accept path. */
export async function submissionPhase(o: { port: number; key: string; count: number }) {
  const text = 'Hello, this is a transactional message of ordinary size.\r\n'.repeat(20);
  const run = `${Date.now()}.${Math.random().toString(36).slice(2, 8)}`;
  const messages = Array.from({ length: o.count }, (_, i) => {
    const to = `user${i}@simulator.posthorn.test`;
    return {
      from: 'orders@shop.bench.test',
      to: [to],
      raw: [
        `From: Shop <orders@shop.bench.test>`,
        `To: ${to}`,
        `Subject: Order ${i}`,
        `Message-ID: <bench-${i}-${run}@client.bench.test>`,
        'MIME-Version: 1.0',
        'Content-Type: text/plain; charset=utf-8',
        '',
        text,
      ].join('\r\n'),
    };
  });
  return blast(o.port, messages, { user: 'bench', pass: o.key });
}

function bouncedCount(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare(`select count(*) as n from email_recipients where status = 'bounced'`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}
