import { iso } from '../../../lib/time.js';
import type { Domain } from './domains.repo.js';
import { dmarcReportAddress, type ExpectedRecord } from './records.js';
import { nextRotationAt, type KeySlot, type RotatingDomain, type RotationSettings } from './dkim-rotation.js';
import type { DomainView } from './domains.service.js';
import type { DomainDmarc } from './domain-dmarc.js';

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
export function presentDomain(v: DomainView) {
  const { domain: d, records } = v;
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
    tracking: { opens: d.openTracking, clicks: d.clickTracking, available: v.trackingAvailable },
    tls: d.tls,
    custom_return_path: d.returnPath,
    list_unsubscribe: d.listUnsubscribe,
    // the signing key and its rotation (docs/domains.md "Key rotation")
    dkim: presentDkim(d, v.keys, v.rotation),
  };
}

/** The `dkim` object of the domain resource. */
export function presentDkim(d: RotatingDomain, keys: readonly KeySlot[], s: RotationSettings) {
  const pending = keys.find((k) => k.state === 'pending');
  return {
    active_selector: d.activeSelector,
    active_since: iso(d.dkimActivatedAt),
    next_rotation_at: iso(nextRotationAt(d, s)),
    rotation: pending
      ? {
          selector: pending.selector,
          published_at: iso(pending.publishedAt),
          signs_from: iso(pending.publishedAt + s.keyTtlMs),
        }
      : null,
    retiring: keys
      .filter((k) => k.state === 'retiring')
      .map((k) => ({ selector: k.selector, removed_at: iso(k.retireAt) })),
  };
}

/** DELETE /v1/domains/{id}: the domain that was removed. */
export function presentDeletedDomain(d: Domain) {
  return { id: d.id, object: 'domain' as const, domain: d.name, deleted: true as const };
}

/** GET /v1/domains/{id}/dmarc */
export function presentDomainDmarc(v: DomainDmarc) {
  const { domain: d, summary: s } = v;
  return {
    object: 'domain_dmarc' as const,
    domain: d.name,
    window_days: v.days,
    report_address: dmarcReportAddress(d.dkimToken, d.returnPath, d.name),
    ...s,
    first_report_begin: iso(s.first_report_begin),
    last_report_end: iso(s.last_report_end),
  };
}
