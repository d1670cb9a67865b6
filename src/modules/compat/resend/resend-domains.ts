import { Type } from '@sinclair/typebox';
import { validationError } from '../../../lib/errors.js';
import { StringEnum } from '../../../lib/schema.js';
import { iso } from '../../../lib/time.js';
import type { Domain } from '../../deliverability/domains/domains.repo.js';
import { CreateDomainBody } from '../../deliverability/domains/domains.schema.js';
import type { DomainInput, DomainPatch, DomainView } from '../../deliverability/domains/domains.service.js';
import type { ExpectedRecord } from '../../deliverability/domains/records.js';
import { cursorOf, resendList } from './resend-lists.js';

// Domains as Resend shows them (docs/resend.md), from the same domain the /v1 routes show: its
// status in Resend's words, its records as Resend lists them (relative names, `ttl` a string,
// a `record` kind and a per-record status). Pure.

/** Resend's regions. A domain here sends from wherever the appliance runs: the region is a label. */
export const RESEND_REGIONS = ['us-east-1', 'eu-west-1', 'sa-east-1', 'ap-northeast-1'] as const;
/** What Resend gives a domain created without one, and what a domain without one shows. */
export const DEFAULT_REGION = 'us-east-1';

const Capability = StringEnum(['enabled', 'disabled'] as const);
const Tls = StringEnum(['opportunistic', 'enforced'] as const);

/** What both create and update may carry beyond our settings: refused unless it asks for what we do. */
const ResendCapabilities = Type.Object(
  { sending: Type.Optional(Capability), receiving: Type.Optional(Capability) },
  { additionalProperties: true },
);

/** POST /domains: Resend's create body, unknown fields ignored as Resend ignores them. */
export const ResendCreateDomainBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 253 }),
    region: Type.Optional(StringEnum(RESEND_REGIONS)),
    custom_return_path: CreateDomainBody.properties.custom_return_path,
    open_tracking: Type.Optional(Type.Boolean()),
    click_tracking: Type.Optional(Type.Boolean()),
    tls: Type.Optional(Tls),
    capabilities: Type.Optional(ResendCapabilities),
    tracking_subdomain: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

/** PATCH /domains/{id}: what Resend's update sends. */
export const ResendUpdateDomainBody = Type.Object(
  {
    open_tracking: Type.Optional(Type.Boolean()),
    click_tracking: Type.Optional(Type.Boolean()),
    tls: Type.Optional(Tls),
    capabilities: Type.Optional(ResendCapabilities),
    tracking_subdomain: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

interface ResendDomainFields {
  open_tracking?: boolean | undefined;
  click_tracking?: boolean | undefined;
  tls?: 'opportunistic' | 'enforced' | undefined;
  capabilities?: { sending?: 'enabled' | 'disabled' | undefined; receiving?: 'enabled' | 'disabled' | undefined };
  tracking_subdomain?: string | undefined;
}

/**
 * Refuses, by name, what Resend has and this appliance cannot do; a value that asks for what it
 * does anyway (sending enabled, receiving disabled, no tracking subdomain) passes.
 */
function refuseUnavailable(b: ResendDomainFields): void {
  if (b.capabilities?.sending === 'disabled')
    throw validationError(
      'capabilities.sending',
      'disabling sending is not available here: a domain always sends; remove the domain instead',
    );
  if (b.capabilities?.receiving === 'enabled')
    throw validationError(
      'capabilities.receiving',
      "receiving per domain is not available here: mail to a project's verified domains arrives at the MX listener (docs/inbound.md)",
    );
  if (b.tracking_subdomain)
    throw validationError(
      'tracking_subdomain',
      "a tracking subdomain is not available here: tracked links go through the appliance's http.public_url",
    );
}

/** Our create input from Resend's body. */
export function fromResendDomain(
  b: ResendDomainFields & { name: string; region?: string; custom_return_path?: string },
) {
  refuseUnavailable(b);
  const input: DomainInput = {
    name: b.name,
    region: b.region,
    custom_return_path: b.custom_return_path,
    open_tracking: b.open_tracking,
    click_tracking: b.click_tracking,
    tls: b.tls,
  };
  return input;
}

/** Our PATCH from Resend's update. */
export function fromResendDomainPatch(b: ResendDomainFields): DomainPatch {
  refuseUnavailable(b);
  return { open_tracking: b.open_tracking, click_tracking: b.click_tracking, tls: b.tls };
}

/** Our domain status in Resend's words: a domain never checked yet is Resend's `not_started`. */
export function resendDomainStatus(d: Pick<Domain, 'status' | 'lastCheckedAt'>): string {
  return d.status === 'pending' && d.lastCheckedAt === null ? 'not_started' : d.status;
}

/** Resend's record kinds: the MX and TXT of the return path are both its `SPF`. */
const RECORD_KIND: Record<ExpectedRecord['purpose'], string> = {
  dkim: 'DKIM',
  return_path: 'SPF',
  spf: 'SPF',
  dmarc: 'DMARC',
};

/** One record's status: from its last check, and for a missing one the domain's state. */
function recordStatus(d: Pick<Domain, 'status' | 'checks'>, r: ExpectedRecord): string {
  const seen = d.checks[r.key]?.dns;
  if (seen === undefined) return 'not_started';
  if (seen === 'found') return 'verified';
  return d.status === 'failed' || d.status === 'temporary_failure' ? d.status : 'pending';
}

/** A name as Resend gives it: relative to the domain (`send`, `ph1._domainkey`), `@` for the domain itself. */
export function relativeName(name: string, domain: string): string {
  if (name === domain) return '@';
  return name.endsWith(`.${domain}`) ? name.slice(0, -(domain.length + 1)) : name;
}

export function resendRecords(v: Pick<DomainView, 'domain' | 'records'>) {
  const d = v.domain;
  return v.records.map((r) => ({
    record: RECORD_KIND[r.purpose],
    name: relativeName(r.name, d.name),
    type: r.type,
    ttl: 'Auto',
    status: recordStatus(d, r),
    value: r.value,
    ...(r.priority !== undefined ? { priority: r.priority } : {}),
  }));
}

/** A domain of GET /domains (no records). */
export function resendListedDomain(d: Domain) {
  return {
    id: d.id,
    name: d.name,
    status: resendDomainStatus(d),
    created_at: iso(d.createdAt),
    region: d.region ?? DEFAULT_REGION,
    capabilities: { sending: 'enabled', receiving: 'disabled' },
    open_tracking: d.openTracking,
    click_tracking: d.clickTracking,
  };
}

/** POST /domains: Resend's create answer has no `object`. */
export function resendCreatedDomain(v: DomainView) {
  return { ...resendListedDomain(v.domain), records: resendRecords(v) };
}

/** GET /domains/{id}. */
export function resendDomain(v: DomainView) {
  return { object: 'domain' as const, ...resendCreatedDomain(v) };
}

/** Resend's list query where `limit` may be left out: the older lists (domains, API keys) then give everything. */
export const ResendAllQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  after: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  before: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
});

/**
 * One page of a whole list held in memory (ours, newest first, by time-ordered id), as Resend
 * pages: `after` an id, older ones; `before` an id, the newer ones nearest to it; `limit` left out,
 * all of them.
 */
export function pageOfAll<T extends { id: string }, U>(
  items: readonly T[],
  q: { limit?: number | undefined; after?: string | undefined; before?: string | undefined },
  present: (item: T) => U,
) {
  const { before: olderThan, newerThan } = cursorOf(q);
  let rest: readonly T[];
  let page: readonly T[];
  if (newerThan !== undefined) {
    rest = items.filter((i) => i.id > newerThan);
    page = q.limit === undefined ? rest : rest.slice(Math.max(0, rest.length - q.limit));
  } else {
    rest = olderThan === undefined ? items : items.filter((i) => i.id < olderThan);
    page = q.limit === undefined ? rest : rest.slice(0, q.limit);
  }
  return resendList(page.map(present), page.length < rest.length);
}
