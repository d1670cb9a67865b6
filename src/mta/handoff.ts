import type { AcceptHandoff, HandoffClaim } from '../modules/sending/emails/accept-batch.js';
import type { AcceptPlan } from '../modules/sending/emails/accept-rules.js';
import type { Email } from '../modules/sending/emails/email.js';
import { claimEmail, claimRow, goesOutNow, isDue } from '../modules/sending/emails/lifecycle.js';
import type { QueueRow } from '../modules/sending/emails/queue.repo.js';
import type { Lease } from '../store/lease.js';

/** What the worker offers the accept of its thread (QueueWorker). */
export interface WorkerRoom {
  /** room for up to `n` more rows now: how many, and the lease to write on them; null when there is none */
  reserve(n: number, now: number): { granted: number; lease: Lease } | null;
  /** the commit that claimed these rows is durable: their attempts start */
  handOver(rows: Array<{ row: QueueRow; email: Email }>): void;
  /** room reserved and not used (the batch claimed less, failed, or was not made durable) */
  release(n: number): void;
}

/**
 * Live mail due now is claimed for the worker of this thread in the
 * transaction that stores it (submitting, with the worker's lease), as far as
 * the worker has room: whole emails, in arrival order. Once that commit is
 * durable the rows are handed over in memory: no second transaction claims
 * them and reads them back. A row whose commit never became durable stays
 * submitting with no data started, which the worker's recovery puts back in
 * the queue (at the next start on SQLite, when the lease ends on PostgreSQL).
 */
export function workerHandoff(worker: WorkerRoom): AcceptHandoff {
  return {
    claim(plan: AcceptPlan, now: number): HandoffClaim | null {
      const due = dueRows(plan, now);
      const wanted = [...due.values()].reduce((n, rows) => n + rows.length, 0);
      const granted = wanted ? worker.reserve(wanted, now) : null;
      if (!granted) return null;
      const claimed: Array<{ row: QueueRow; email: Email }> = [];
      let left = granted.granted;
      plan.emails.forEach((email, at) => {
        const rows = due.get(email.id);
        if (!rows || rows.length > left) return;
        left -= rows.length;
        const taken = claimEmail(email, now);
        plan.emails[at] = taken;
        for (const i of rows) {
          plan.rows[i] = claimRow(plan.rows[i], now, granted.lease);
          claimed.push({ row: plan.rows[i], email: taken });
        }
      });
      const unused = granted.granted - claimed.length;
      return {
        handOver() {
          if (unused) worker.release(unused);
          worker.handOver(claimed);
        },
        giveBack: () => worker.release(granted.granted),
      };
    },
  };
}

/** The plan's queue rows of live mail due now, by email (positions in plan.rows). */
function dueRows(plan: AcceptPlan, now: number): Map<string, number[]> {
  // broadcast mail waits in the queue, behind transactional mail (claimDueRows)
  const live = new Set(plan.emails.filter((e) => goesOutNow(e) && e.broadcastId === null).map((e) => e.id));
  const due = new Map<string, number[]>();
  plan.rows.forEach((q, i) => {
    if (!live.has(q.emailId) || !isDue(q, now)) return;
    const rows = due.get(q.emailId) ?? [];
    rows.push(i);
    due.set(q.emailId, rows);
  });
  return due;
}
