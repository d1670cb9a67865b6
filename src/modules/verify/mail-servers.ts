import type { DnsResolver } from '../../dns/resolver.js';

/** What DNS says about where a domain's mail goes. */
export type MailServers =
  | { kind: 'found'; hosts: string[] }
  /** NXDOMAIN, no MX and no address, or a null MX (RFC 7505): nothing takes mail for it */
  | { kind: 'none' }
  /** DNS did not answer in time, or failed: the address is `unknown`, not invalid */
  | { kind: 'unanswered' };

// Answers that end a lookup: the name does not exist, or has no record of the type asked.
const NO_NAME = new Set(['ENOTFOUND', 'NXDOMAIN', 'ENONAME']);
const NO_DATA = new Set(['ENODATA']);

/**
 * A domain's mail servers (RFC 5321 §5.1): its MX hosts by preference, or
 * the domain itself when it has an address (A/AAAA) and no MX. Definitive
 * answers are kept for `ttlMs` (a batch of 100 on one domain asks once);
 * failures are not kept.
 */
export class MailServerLookup {
  private readonly cache = new Map<string, { value: MailServers; until: number }>();
  private readonly inFlight = new Map<string, Promise<MailServers>>();

  constructor(
    private readonly resolver: DnsResolver,
    private readonly now: () => number,
    private readonly ttlMs = 5 * 60_000,
    private readonly maxEntries = 10_000,
  ) {}

  lookup(domain: string): Promise<MailServers> {
    const cached = this.cache.get(domain);
    if (cached && cached.until > this.now()) return Promise.resolve(cached.value);
    const running = this.inFlight.get(domain);
    if (running) return running;
    const p = this.ask(domain).then((value) => {
      this.inFlight.delete(domain);
      if (value.kind !== 'unanswered') this.remember(domain, value);
      return value;
    });
    this.inFlight.set(domain, p);
    return p;
  }

  private remember(domain: string, value: MailServers): void {
    if (this.cache.size >= this.maxEntries) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(domain, { value, until: this.now() + this.ttlMs });
  }

  private async ask(domain: string): Promise<MailServers> {
    try {
      const mx = await this.resolver.resolveMx(domain);
      // RFC 7505: a single MX of preference 0 and host "." says the domain takes no mail
      if (mx.length === 1 && (mx[0]!.exchange === '' || mx[0]!.exchange === '.')) return { kind: 'none' };
      const hosts = [...mx].filter((r) => r.exchange && r.exchange !== '.').sort((a, b) => a.priority - b.priority || a.exchange.localeCompare(b.exchange)).map((r) => r.exchange.toLowerCase().replace(/\.$/, ''));
      if (hosts.length) return { kind: 'found', hosts: [...new Set(hosts)] };
    } catch (e) {
      const code = (e as { code?: string }).code ?? '';
      if (NO_NAME.has(code)) return { kind: 'none' };
      if (!NO_DATA.has(code)) return { kind: 'unanswered' };
    }
    return this.implicitMx(domain);
  }

  /** No MX: the domain itself, when it has an IPv4 or IPv6 address. */
  private async implicitMx(domain: string): Promise<MailServers> {
    const answers = await Promise.allSettled([this.resolver.resolve4(domain), this.resolver.resolve6(domain)]);
    if (answers.some((a) => a.status === 'fulfilled' && a.value.length > 0)) return { kind: 'found', hosts: [domain] };
    const failed = answers.some((a) => a.status === 'rejected' && !NO_NAME.has(code(a.reason)) && !NO_DATA.has(code(a.reason)));
    return failed ? { kind: 'unanswered' } : { kind: 'none' };
  }
}

const code = (e: unknown) => (e as { code?: string }).code ?? '';
