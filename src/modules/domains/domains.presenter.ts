import { iso } from '../../lib/time.js';
import type { Domain } from './domains.repo.js';
import type { ExpectedRecord } from './records.js';
import type { presentDkim } from './dkim-rotation.js';

export function presentRecords(d: Domain, records: ExpectedRecord[]) {
  return records.map((r) => ({
    purpose: r.purpose,
    required: r.required,
    type: r.type,
    name: r.name,
    value: r.value,
    ...(r.priority !== undefined ? { priority: r.priority } : {}),
    ttl: 'auto',
    dns: d.checks[r.key]?.dns ?? 'unchecked',
  }));
}

/** interface §2.2 */
export function presentDomain(d: Domain, records: ExpectedRecord[], trackingAvailable: boolean, dkim: ReturnType<typeof presentDkim>) {
  const required = records.filter((r) => r.required);
  return {
    id: d.id,
    object: 'domain' as const,
    domain: d.name,
    name: d.name,
    region: d.region,
    status: d.status,
    failure_reason: d.failureReason,
    verified_at: iso(d.verifiedAt),
    last_checked_at: iso(d.lastCheckedAt),
    created_at: iso(d.createdAt),
    records: presentRecords(d, records),
    dns_summary: {
      required_total: required.length,
      required_found: required.filter((r) => d.checks[r.key]?.dns === 'found').length,
      checked: d.lastCheckedAt !== null,
    },
    open_tracking: d.openTracking,
    click_tracking: d.clickTracking,
    tracking: { opens: d.openTracking, clicks: d.clickTracking, available: trackingAvailable },
    tls: d.tls,
    custom_return_path: d.returnPath,
    // the signing key and its rotation (docs/domains.md "Key rotation")
    dkim,
  };
}
