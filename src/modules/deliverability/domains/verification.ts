import type { RecordCheck } from '../../../dns/checks.js';
import { nextStatus, type DomainStatus } from './domain-state.js';
import type { Domain, StoredCheck } from './domains.repo.js';
import type { ExpectedRecord } from './records.js';

// A DNS check's verdict on a domain (LIFECYCLE Domain), without I/O: what verifyDomain stores.

/**
 * The records checked for `checked` that still describe `current`. A PATCH
 * of the return path while the lookups ran moved the MX and SPF records to
 * another name: what was seen at the old name must not be stored as the
 * verdict on the new one.
 */
export function stillCurrent(
  records: ExpectedRecord[],
  checked: Pick<Domain, 'returnPath'>,
  current: Pick<Domain, 'returnPath'>,
): ExpectedRecord[] {
  if (checked.returnPath === current.returnPath) return records;
  return records.filter((r) => r.purpose !== 'return_path' && r.purpose !== 'spf');
}

export function applyCheck(
  d: Domain,
  records: ExpectedRecord[],
  results: Map<string, RecordCheck>,
  now: number,
): Domain {
  const checks: Record<string, StoredCheck> = { ...d.checks };
  for (const r of records) {
    const res = results.get(r.key);
    if (res && res.dns !== 'error') checks[r.key] = { dns: res.dns, seen: res.seen };
  }
  const required = records.filter((r) => r.required);
  const allRequiredFound = required.every((r) => checks[r.key]?.dns === 'found');
  const unanswered = required.filter((r) => results.get(r.key)?.dns === 'error');
  const inconclusive = unanswered.length > 0;
  const status: DomainStatus = nextStatus(d.status, { allRequiredFound, inconclusive }, now - d.createdAt);
  const missing = required.filter((r) => !unanswered.includes(r) && checks[r.key]?.dns !== 'found');
  return {
    ...d,
    checks,
    status,
    lastCheckedAt: now,
    verifiedAt: status === 'verified' && d.status !== 'verified' ? now : d.verifiedAt,
    failureReason:
      status === 'verified' ? null : (failureReason(missing, unanswered, checks, results) ?? d.failureReason),
    updatedAt: now,
  };
}

/**
 * failure_reason names the records at fault. A record whose lookup failed
 * (timeout, SERVFAIL, unreachable resolver) was not seen missing: saying
 * "not found" would send the customer to fix DNS that may well be right.
 */
function failureReason(
  missing: ExpectedRecord[],
  unanswered: ExpectedRecord[],
  checks: Record<string, StoredCheck>,
  results: Map<string, RecordCheck>,
): string | null {
  const parts: string[] = [];
  if (missing.length)
    parts.push(
      `required DNS records not found: ${missing.map((r) => `${r.name} (${r.type}: ${checks[r.key]?.dns ?? 'unchecked'})`).join(', ')}`,
    );
  if (unanswered.length) {
    const why = results.get(unanswered[0].key)?.seen[0]?.replace(/^lookup failed: /, '');
    parts.push(
      `DNS lookups failed${why ? ` (${why})` : ''}, so these required records could not be checked: ${unanswered.map((r) => `${r.name} (${r.type})`).join(', ')}`,
    );
  }
  return parts.length ? parts.join('; ') : null;
}
