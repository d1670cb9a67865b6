import { isIP } from 'node:net';
import { isNoRecord, normalizeName, type DnsResolver } from '../../../dns/resolver.js';
import { TtlCache } from '../../../lib/ttl-cache.js';

/** What DNS says about where a domain's mail goes. */
export type MailServers =
  | { kind: 'found'; hosts: string[] }
  /** NXDOMAIN, no MX and no address, a null MX (RFC 7505), or MX records that name no host: nothing takes mail for it */
  | { kind: 'none' }
  /** DNS did not answer in time, or answered with an error (SERVFAIL, REFUSED): the address is `unknown`, not invalid */
  | { kind: 'unanswered'; why: 'timeout' | 'error' };

/**
 * A domain's mail servers (RFC 5321 §5.1): its MX hosts by preference, or
 * the domain itself when it has an address (A/AAAA) and no MX. Definitive
 * answers are kept for `ttlMs` and a lookup under way is shared (a batch of
 * 100 on one domain asks once); failures are not kept.
 */
export class MailServerLookup {
  private readonly cache: TtlCache<MailServers>;

  constructor(
    private readonly resolver: DnsResolver,
    now: () => number,
    ttlMs = 5 * 60_000,
  ) {
    this.cache = new TtlCache<MailServers>(ttlMs, (v) => v.kind !== 'unanswered', now, 10_000);
  }

  lookup(domain: string): Promise<MailServers> {
    return this.cache.get(domain, () => this.ask(domain));
  }

  private async ask(domain: string): Promise<MailServers> {
    try {
      const mx = await this.resolver.resolveMx(domain);
      if (mx.length) {
        // RFC 7505's null MX ("."), even when sent more than once, says the domain takes no mail; an MX
        // naming an IP address is not a host name (RFC 5321 §5.1) and MTAs refuse to use it. Either
        // way there is an MX, so the domain's own address is not tried.
        const hosts = [...mx]
          .filter((r) => r.exchange && r.exchange !== '.' && !isIP(r.exchange))
          .sort((a, b) => a.priority - b.priority || a.exchange.localeCompare(b.exchange))
          .map((r) => normalizeName(r.exchange));
        return hosts.length ? { kind: 'found', hosts: [...new Set(hosts)] } : { kind: 'none' };
      }
    } catch (e) {
      const failed = this.failure(e);
      if (failed) return failed;
    }
    return this.implicitMx(domain);
  }

  /** No MX: the domain itself, when it has an IPv4 or IPv6 address. */
  private async implicitMx(domain: string): Promise<MailServers> {
    const answers = await Promise.allSettled([this.resolver.resolve4(domain), this.resolver.resolve6(domain)]);
    if (answers.some((a) => a.status === 'fulfilled' && a.value.length > 0)) return { kind: 'found', hosts: [domain] };
    for (const a of answers) {
      const failed = a.status === 'rejected' ? this.failure(a.reason) : null;
      if (failed && failed.kind === 'unanswered') return failed;
    }
    return { kind: 'none' };
  }

  /** An error of a lookup: the name does not exist (none), has no such records (null: go on), or DNS failed. */
  private failure(e: unknown): MailServers | null {
    const code = (e as { code?: string }).code;
    if (!isNoRecord(e)) return { kind: 'unanswered', why: code === 'ETIMEOUT' ? 'timeout' : 'error' };
    return code === 'ENODATA' ? null : { kind: 'none' };
  }
}
