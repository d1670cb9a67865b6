import type { Config } from '../../config/config.js';
import { createTlsaLookup } from '../../dns/tlsa.js';
import type { DnsResolver } from '../../dns/resolver.js';
import type { Clock } from '../../lib/time.js';
import type { Logger } from '../../log/logger.js';
import type { Store } from '../../store/store.js';
import type { Db } from '../../store/db.js';
import { StsPolicies, type StsFetch } from './sts-policies.js';
import { TlsRptCounter } from './tls-rpt-counter.js';
import { TransportSecurity } from './transport-security.js';

// The transport security of direct delivery, built from outbound.mta_sts, outbound.dane and
// dns.resolvers for the MTA role (queue-roles.ts): the policies DestinationFinder applies and the
// TLS-RPT counter the SMTP pool reports its sessions to.

/** RFC 8461 §3.3 asks for a short timeout on the policy fetch: the whole request, DNS apart. */
export const STS_FETCH_TIMEOUT_MS = 10_000;

export interface OutboundTls {
  security: TransportSecurity | null;
  counter: TlsRptCounter | null;
}

export interface OutboundTlsDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  resolver: DnsResolver;
  /** a transaction of the single writer (core.writer) */
  write: (fn: (trx: Db) => Promise<void>) => Promise<unknown>;
}

/** Nothing in relay mode (the relay applies its own policies), nor with both off. */
export function outboundTls(config: Config, deps: OutboundTlsDeps, fetch: StsFetch): OutboundTls {
  const { outbound } = config;
  if (outbound.mode !== 'direct' || (!outbound.mtaSts && !outbound.dane)) return { security: null, counter: null };
  const counter = new TlsRptCounter({ clock: deps.clock, write: deps.write, logger: deps.logger });
  const sts = outbound.mtaSts
    ? new StsPolicies({
        resolver: deps.resolver,
        fetch,
        reader: deps.store.reader,
        write: deps.write,
        clock: deps.clock,
        logger: deps.logger,
        onFailure: (domain, failure) =>
          counter.record({ type: 'sts', domain, testing: false, strings: [] }, noSession, failure),
      })
    : null;
  const tlsa = outbound.dane ? createTlsaLookup({ servers: config.dns.resolvers }) : null;
  counter.start();
  return { security: new TransportSecurity({ sts, tlsa, clock: deps.clock, report: counter }), counter };
}

/** A policy that could not be fetched: no session was made (RFC 8460 §4.3.2 counts it all the same). */
const noSession = { mxHost: '', sendingIp: '', receivingIp: '' };

/** outbound.* with the policies, for LiveAttempt to hand to its DestinationFinder. */
export function withSecurity<T extends Config['outbound']>(
  outbound: T,
  tls: OutboundTls,
): T & { security?: TransportSecurity } {
  return tls.security ? { ...outbound, security: tls.security } : outbound;
}
