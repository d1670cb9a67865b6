import type { Clock } from '../../../lib/time.js';
import type { Db } from '../../../store/db.js';
import type { Store } from '../../../store/store.js';
import { classifyBounce } from '../../receiving/bounces/classify-bounce.js';
import { reasonInfo } from '../../receiving/bounces/reasons.js';
import { eventsOfEmail } from '../../notifying/events/events.repo.js';
import { removeSuppression } from './suppressions.repo.js';
import { bounceSuppressions, type BounceSuppressionRow as Row } from './review.repo.js';

/**
 * `posthorn suppressions review`: the bounce suppressions in force, each bounce read again with
 * today's classifier. Classifiers improve (a filter's "550 5.7.1 refused" was once read as an
 * unknown user): an address whose bounce now reads soft was suppressed by mistake and may be
 * released. Never automatic: the operator asks with --release. Suppressions the project's
 * soft-bounce policy made are meant for soft reasons and are not listed as releasable.
 */
export interface ReviewedSuppression {
  project_id: string;
  email: string;
  /** the reason stored when it was suppressed; null when it predates stored reasons */
  suppressed_for: string | null;
  /** the reason and bounce_type the classifier reads now; null when no words were kept to read */
  reason: string | null;
  bounce_type: string | null;
  status: string | null;
  diagnostic: string | null;
  /** the bounce now reads soft: the address is not gone */
  releasable: boolean;
  released: boolean;
}

export async function reviewSuppressions(
  deps: { store: Store; clock: Clock },
  opts: { projectId?: string | undefined; release: boolean },
): Promise<ReviewedSuppression[]> {
  const now = deps.clock.now();
  const out: ReviewedSuppression[] = [];
  for (const r of await bounceSuppressions(deps.store.reader, now, opts.projectId)) {
    const words = r.diagnostic
      ? { status: r.bounce_status, diagnostic: r.diagnostic }
      : await bounceOf(deps.store.reader, r);
    const verdict = words ? classifyBounce({ status: words.status, diagnostic: words.diagnostic, final: true }) : null;
    const releasable = !!verdict && verdict.bounceType !== 'Permanent' && !madeByPolicy(r.bounce_reason);
    out.push({
      project_id: r.project_id,
      email: r.address,
      suppressed_for: r.bounce_reason,
      reason: verdict?.reason ?? null,
      bounce_type: verdict?.bounceType ?? null,
      status: verdict?.status ?? null,
      diagnostic: words?.diagnostic ?? null,
      releasable,
      released: false,
    });
  }
  if (opts.release)
    for (const x of out.filter((y) => y.releasable))
      x.released = await deps.store.tx((trx) => removeSuppression(trx, x.project_id, x.email));
  return out;
}

/**
 * A suppression the project's soft-bounce policy made (after N full-mailbox or suspended bounces)
 * was meant for a soft reason: not a mistake to review. One an older classifier made for a hard
 * reason (or a reason name it no longer uses, or none kept) is.
 */
const madeByPolicy = (stored: string | null): boolean => reasonInfo(stored)?.hard === false;

/** A suppression kept no words (it predates them): the email.bounced event of its email and address, if retention kept it. */
async function bounceOf(db: Db, r: Row): Promise<{ status: string | null; diagnostic: string } | null> {
  if (!r.email_id) return null;
  const bounced = (await eventsOfEmail(db, r.email_id)).find(
    (e) => e.type === 'email.bounced' && e.recipient === r.address,
  );
  const details = bounced?.data.details as { status?: unknown; diagnostic?: unknown } | undefined;
  if (typeof details?.diagnostic !== 'string' || !details.diagnostic) return null;
  return { status: typeof details.status === 'string' ? details.status : null, diagnostic: details.diagnostic };
}
