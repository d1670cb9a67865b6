import type { Knex } from 'knex';
import { lockRows } from '../../../store/db.js';
import { verifiedDomainsOf } from '../../deliverability/domains/domains.repo.js';
import { insertEvents } from '../../notifying/events/events.repo.js';
import { findProjectsById } from '../../account/projects/projects.repo.js';
import { periodsOf } from '../../account/projects/periods.js';
import { addUsage, usageCounts } from '../../account/projects/usage.repo.js';
import { suppressedAmong } from '../suppressions/suppressions.repo.js';
import { insertUnsubscribeLinks } from './unsubscribe-links.repo.js';
import { membersOf, type AcceptFacts, type AcceptPlan, type AcceptRequest } from './accept-rules.js';
import { insertEmails } from './email-rows.repo.js';
import { answersFor, forgetAnswers, recordAnswers } from './idempotency.repo.js';
import { insertQueueRows } from './queue.repo.js';

/**
 * What a batch of the accept queue (accept-batch.ts) reads and writes inside
 * its transaction, on either side of the rules (accept-rules.ts planAccept):
 * the facts they decide on, then the plan they made.
 */

/** What the rules must see as stored now, read in the batch's transaction: one query per kind for the whole batch. */
export async function readAcceptFacts(
  trx: Knex.Transaction,
  batch: AcceptRequest[],
  now: number,
  since: number,
): Promise<AcceptFacts> {
  // a batch's emails each have their From and recipients
  const members = batch.flatMap(membersOf);
  const live = members.filter((p) => p.environment === 'live');
  const liveProjects = [...new Set(live.map((p) => p.project.id))];
  // The one lock order (docs/ARCHITECTURE.md): the rows of the projects whose usage this batch counts,
  // in id order, before their counters; another node's batch of the same projects waits, never deadlocks.
  await lockRows(trx, 'projects', liveProjects);
  return {
    now,
    suppressed: await suppressedAmong(
      trx,
      members.flatMap((p) => p.prepared.recipients.map((r) => ({ projectId: p.project.id, address: r.address }))),
      now,
    ),
    verified: await verifiedDomainsOf(trx, [...new Set(live.map((p) => p.prepared.from.domain))]),
    projects: await findProjectsById(trx, liveProjects),
    usage: await usageCounts(trx, liveProjects, Object.values(periodsOf(now))),
    answered: await answersFor(
      trx,
      batch.flatMap((p) => (p.idempotency ? [{ projectId: p.project.id, key: p.idempotency.key }] : [])),
      since,
    ),
  };
}

/**
 * The plan's answers to Idempotency-Keys, written before anything else of it.
 * Answers whether another process answered one of these keys first (its
 * commit came between this batch's read and now, on PostgreSQL): then nothing
 * of this plan stays, and the batch is planned again, finding that answer.
 */
export async function claimAnswers(trx: Knex.Transaction, plan: AcceptPlan, since: number): Promise<boolean> {
  const lost = await recordAnswers(trx, plan.answers, since);
  if (!lost.length) return true;
  await forgetAnswers(
    trx,
    plan.answers.filter((a) => !lost.includes(a)),
  );
  return false;
}

/** The batch's emails, their queue rows and events, and its usage (its answers: claimAnswers, first). */
export async function writeAcceptPlan(trx: Knex.Transaction, plan: AcceptPlan): Promise<void> {
  await insertEmails(trx, plan.emails, plan.attachments);
  await insertUnsubscribeLinks(trx, plan.emails);
  await insertQueueRows(trx, plan.rows);
  await insertEvents(trx, plan.events);
  for (const [projectId, period, n] of plan.usage) await addUsage(trx, projectId, period, n);
}
