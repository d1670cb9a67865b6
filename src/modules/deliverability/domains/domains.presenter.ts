import { iso } from '../../../lib/time.js';
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
    ...(r.purpose === 'dmarc' ? dmarcNote(d, r) : {}),
  }));
}

/** A domain that already publishes its own DMARC record is told how to add the appliance's report address to it. */
function dmarcNote(d: Domain, r: ExpectedRecord): { note?: string } {
  const check = d.checks[r.key];
  const address = /rua=mailto:([^;]+);/.exec(r.value)?.[1];
  const published = check?.dns === 'found' ? check.seen[0] : undefined;
  if (!address || !published || published.toLowerCase().includes(address.toLowerCase())) return {};
  const rua = /(?:^|;)\s*rua\s*=\s*([^;]*)/i.exec(published)?.[1]?.trim();
  return {
    note: rua
      ? `To receive DMARC reports here, add the address to the record's rua tag: rua=${rua},mailto:${address}`
      : `To receive DMARC reports here, add rua=mailto:${address}; to the record`,
  };
}

/** interface §2.2 */
export function presentDomain(
  d: Domain,
  records: ExpectedRecord[],
  trackingAvailable: boolean,
  dkim: ReturnType<typeof presentDkim>,
) {
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
    list_unsubscribe: d.listUnsubscribe,
    // the signing key and its rotation (docs/domains.md "Key rotation")
    dkim,
  };
}
