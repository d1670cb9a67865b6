import { classifyBounce } from '../modules/receiving/bounces/classify-bounce.js';
import type { Config } from '../config/config.js';
import type { DnsResolver } from '../dns/resolver.js';
import { TtlCache } from '../lib/ttl-cache.js';
import type { RecipientOutcome } from '../modules/sending/emails/lifecycle.js';
import type { TlsMode } from '../modules/deliverability/domains/domains.repo.js';
import { resolveDestinations, type Destinations, type MxHost } from './resolve-mx.js';
import type { Destination } from './smtp-pool.js';
import type { HostTls, TransportSecurity } from './tls-policy/transport-security.js';

/**
 * outbound.* as the finder reads it; `security` (MTA-STS and DANE, built in queue-roles.ts) comes
 * along with the config slice, so that LiveAttempt passes it through without knowing of it.
 */
export type FinderOutbound = Pick<Config['outbound'], 'mode' | 'relay' | 'mxPort'> & {
  security?: TransportSecurity | null;
};

/** Where a queue row's message goes: the relay, or the MX hosts of its route (direct mode). */
export class DestinationFinder {
  // MX answers are kept a minute: a burst to one domain asks DNS once. Failures are not kept.
  private readonly mx = new TtlCache<Destinations>(60_000, (v) => v.kind !== 'dns_error');

  constructor(
    private readonly outbound: FinderOutbound,
    private readonly resolver: DnsResolver,
  ) {}

  /**
   * The hosts to try in order, or the recipients' outcome when the route's
   * domain takes no mail (null MX, NXDOMAIN: bounced) or DNS failed (deferred).
   * A domain with tls: enforced never leaves over plain text, the first hop
   * to a relay included; a relay gets credentials, so its certificate is checked.
   * In direct mode the recipient domain's MTA-STS policy and its MX hosts' DANE
   * records may leave out hosts and ask for TLS with a checked certificate
   * (tls-policy/transport-security.ts); when they leave no host, the recipients wait. `unpoliced`:
   * those policies are not applied (and the sessions not counted for TLS-RPT): a TLS report's mail.
   */
  async of(route: string, tls: TlsMode, unpoliced = false): Promise<Destination[] | RecipientOutcome> {
    const out = this.outbound;
    if (out.mode === 'relay') {
      const r = out.relay!;
      return [
        {
          host: r.host!,
          port: r.port,
          secure: r.secure,
          tls,
          verifyCertificate: true,
          ...(r.user ? { auth: { user: r.user, pass: r.pass ?? '' } } : {}),
        },
      ];
    }
    const found = await this.mx.get(route, () => resolveDestinations(route, this.resolver));
    switch (found.kind) {
      case 'hosts':
        return this.direct(route, found.hosts, tls, unpoliced);
      case 'null_mx':
        return bouncedBy(`556 5.1.10 ${route} does not accept mail (null MX, RFC 7505)`);
      case 'no_domain':
        return bouncedBy(`550 5.1.2 ${route} does not exist (NXDOMAIN)`);
      case 'dns_error':
        return { kind: 'deferred', reply: `451 4.4.3 DNS lookup for ${route} failed: ${found.reason}`, wait: 'dns' };
    }
  }

  /** Every address of every MX host the policies leave, with what they ask of its connections. */
  private async direct(
    route: string,
    hosts: MxHost[],
    tls: TlsMode,
    unpoliced: boolean,
  ): Promise<Destination[] | RecipientOutcome> {
    const security = unpoliced ? null : this.outbound.security;
    const plans = security
      ? await security.hostsTls(
          route,
          hosts.map((h) => h.name),
        )
      : hosts.map((): HostTls => ({}));
    if (!Array.isArray(plans)) return plans;
    return hosts.flatMap((h, i) => {
      const p = plans[i];
      return p
        ? h.addresses.map((address) => ({
            host: address,
            servername: h.name,
            port: this.outbound.mxPort,
            ...p,
            tls: p.tls ?? tls,
          }))
        : [];
    });
  }
}

/** The answer DNS gave, as the reply a server would have: the classifier reads it like any other. */
function bouncedBy(reply: string): RecipientOutcome {
  return { kind: 'bounced', bounce: classifyBounce({ diagnostic: reply, final: true }), reply };
}
