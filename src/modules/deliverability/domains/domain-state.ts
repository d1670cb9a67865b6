export const DOMAIN_STATUSES = ['pending', 'verified', 'failed', 'temporary_failure'] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];

/** LIFECYCLE: a pending domain whose records are still missing this long after creation has failed. */
export const PENDING_GIVE_UP_MS = 72 * 3_600_000;

/**
 * LIFECYCLE Domain, as a pure function of the last check:
 * pending → verified | failed (after 72 h); verified → temporary_failure;
 * temporary_failure → verified; failed → verified.
 * `inconclusive`: DNS did not answer for a required record, so nothing is concluded.
 */
export function nextStatus(
  current: DomainStatus,
  check: { allRequiredFound: boolean; inconclusive: boolean },
  ageMs: number,
): DomainStatus {
  if (check.allRequiredFound) return 'verified';
  if (check.inconclusive) return current;
  switch (current) {
    case 'pending':
      return ageMs >= PENDING_GIVE_UP_MS ? 'failed' : 'pending';
    case 'verified':
    case 'temporary_failure':
      return 'temporary_failure';
    case 'failed':
      return 'failed';
  }
}

/** Only a verified domain may send live mail (interface §4.1, LIFECYCLE temporary_failure). */
export const canSendLive = (status: DomainStatus) => status === 'verified';
