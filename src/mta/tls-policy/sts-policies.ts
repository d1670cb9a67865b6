import { isNoRecord, type DnsResolver } from '../../dns/resolver.js';
import type { Clock } from '../../lib/time.js';
import { TtlCache } from '../../lib/ttl-cache.js';
import type { Logger } from '../../log/logger.js';
import type { Db } from '../../store/db.js';
import { findStsPolicy, saveStsPolicy } from '../../modules/deliverability/tls-policy/mta-sts.repo.js';
import {
  parseStsPolicy,
  parseStsTxt,
  stsCacheDecision,
  stsOnFetchFailure,
  stsPolicyUrl,
  stsShouldRefresh,
  type StsCached,
  type StsPolicy,
} from './mta-sts.js';

// The MTA-STS policy of a recipient domain (RFC 8461), as delivery applies it: the `_mta-sts` TXT
// record through dns.resolvers, the policy fetched over HTTPS through the SSRF guard (the caller's
// fetch), cached in the store for its max_age (shared by the nodes, kept over restarts) and, in
// front of that, in memory for a minute, so that a burst to one domain asks neither DNS nor the
// store per message.

/** The answer to the policy's GET: the SSRF guard's (net/egress.ts), no redirect followed. */
export interface StsFetchResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}
export type StsFetch = (url: string) => Promise<StsFetchResponse>;

/** RFC 8460 §4.3.2's failures of getting a policy. */
export type StsFetchFailure = 'sts-policy-fetch-error' | 'sts-policy-invalid';

export interface StsPoliciesOptions {
  resolver: Pick<DnsResolver, 'resolveTxt'>;
  fetch: StsFetch;
  /** reads (store.reader) */
  reader: Db;
  /** writes, in the caller's transaction of the single writer */
  write: (fn: (trx: Db) => Promise<void>) => Promise<unknown>;
  clock: Clock;
  logger?: Logger;
  /** how long a domain's policy is kept in memory before TXT and the store are asked again */
  memoryMs?: number;
  /** a policy that could not be had, for TLS-RPT */
  onFailure?: (domain: string, failure: StsFetchFailure) => void;
}

type Fetched = { policy: StsPolicy; text: string } | { failure: StsFetchFailure; reason: string };

export class StsPolicies {
  private readonly memory: TtlCache<StsPolicy | null>;

  constructor(private readonly o: StsPoliciesOptions) {
    this.memory = new TtlCache(
      o.memoryMs ?? 60_000,
      () => true,
      () => o.clock.now(),
    );
  }

  /** The policy that applies to mail for `domain` now, or null (none, or none could be had). */
  policyFor(domain: string): Promise<StsPolicy | null> {
    const key = domain.toLowerCase();
    return this.memory.get(key, async () => {
      try {
        return await this.current(key);
      } catch (e) {
        // the store failed: the last policy known stays in force rather than none
        this.o.logger?.warn({ err: e, domain: key }, 'MTA-STS policy lookup failed');
        return this.memory.peek(key) ?? null;
      }
    });
  }

  /** §5.1: the TXT record's id against the cached policy's; a new id, an expired or old policy: fetch. */
  private async current(domain: string): Promise<StsPolicy | null> {
    const now = this.o.clock.now();
    const [txt, cached] = await Promise.all([this.txtOf(domain), this.cachedOf(domain)]);
    let decision = stsCacheDecision(cached, txt, now);
    if (decision === 'use_cached' && txt && !('error' in txt) && stsShouldRefresh(cached, now)) decision = 'fetch';
    if (decision === 'none') return null;
    if (decision === 'use_cached' || !txt || 'error' in txt) return cached!.policy;
    const got = await this.fetch(domain);
    if ('failure' in got) {
      this.o.logger?.warn({ domain, reason: got.reason }, 'MTA-STS policy could not be fetched');
      this.o.onFailure?.(domain, got.failure);
      // §3.3: a valid cached policy stays in force; without one, delivery goes on as without MTA-STS
      return stsOnFetchFailure(cached, now);
    }
    const expiresAt = now + got.policy.maxAgeSeconds * 1000;
    try {
      await this.o.write((trx) =>
        saveStsPolicy(trx, { domain, txtId: txt.id, policyText: got.text, fetchedAt: now, expiresAt }),
      );
    } catch (e) {
      this.o.logger?.warn({ err: e, domain }, 'MTA-STS policy could not be stored');
    }
    return got.policy;
  }

  /** The `_mta-sts` TXT record (§3.1); a failed lookup counts as no usable record (the cache stays in force). */
  private async txtOf(domain: string): Promise<{ id: string } | { error: string } | null> {
    try {
      return parseStsTxt(await this.o.resolver.resolveTxt(`_mta-sts.${domain}`));
    } catch (e) {
      if (isNoRecord(e)) return null;
      return { error: `TXT lookup failed (${(e as { code?: string }).code ?? (e as Error).message})` };
    }
  }

  private async cachedOf(domain: string): Promise<StsCached | null> {
    const row = await findStsPolicy(this.o.reader, domain);
    if (!row) return null;
    const policy = parseStsPolicy(row.policyText);
    return 'error' in policy ? null : { id: row.txtId, fetchedAt: row.fetchedAt, policy };
  }

  /**
   * §3.3: HTTPS GET of the policy with a valid certificate for mta-sts.<domain> (the guard's
   * PKIX check), 200 only, no redirect followed; §3.2: text/plain, at most 64 KiB (the fetch's cap).
   */
  private async fetch(domain: string): Promise<Fetched> {
    let res: StsFetchResponse;
    try {
      res = await this.o.fetch(stsPolicyUrl(domain));
    } catch (e) {
      return { failure: 'sts-policy-fetch-error', reason: (e as Error).message };
    }
    if (res.status !== 200) return { failure: 'sts-policy-fetch-error', reason: `HTTP status ${res.status}` };
    const type = (res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (type !== 'text/plain')
      return { failure: 'sts-policy-invalid', reason: `Content-Type ${type || 'missing'}, not text/plain` };
    const text = res.body.toString('utf8');
    const policy = parseStsPolicy(text);
    return 'error' in policy ? { failure: 'sts-policy-invalid', reason: policy.error } : { policy, text };
  }
}
