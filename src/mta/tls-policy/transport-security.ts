import type { TlsaAnswer, TlsaLookup } from '../../dns/tlsa.js';
import type { Clock } from '../../lib/time.js';
import { TtlCache } from '../../lib/ttl-cache.js';
import type { RecipientOutcome } from '../../modules/sending/emails/lifecycle.js';
import { parseTlsaRdata, tlsaToString, type Tlsa } from './dane.js';
import { stsPolicyReportStrings, stsVerdict, type StsPolicy } from './mta-sts.js';
import type { StsPolicies } from './sts-policies.js';
import { policyReply, type TlsPolicyRef, type TlsSessionRecorder } from './tls-session.js';

// The recipient domain's MTA-STS policy (RFC 8461) and each MX host's DANE TLSA records (RFC 7672)
// applied to the MX hosts of direct delivery: which hosts may be used, and how each must be
// reached. DestinationFinder (destinations.ts) asks this for every attempt in direct mode.

export interface TransportSecurityOptions {
  /** outbound.mta_sts; null: off */
  sts: StsPolicies | null;
  /** outbound.dane; null: off */
  tlsa: TlsaLookup | null;
  clock: Clock;
  /** TLS-RPT counts: an MX host an enforced policy refused counts as a failed session */
  report?: TlsSessionRecorder;
}

/** How one MX host must be reached (the fields of smtp-pool.ts's Destination); tls unset: the domain's setting. */
export interface HostTls {
  tls?: 'enforced';
  verifyCertificate?: boolean;
  dane?: Tlsa[];
  policy?: TlsPolicyRef;
}

type HostPlan = { use: HostTls } | { skip: string; mismatch?: boolean; policy: Pick<TlsPolicyRef, 'type' | 'domain'> };

/** TLSA answers are kept as long as MX answers (destinations.ts): a minute. */
const TLSA_CACHE_MS = 60_000;

export class TransportSecurity {
  private readonly tlsaAnswers: TtlCache<TlsaAnswer>;

  constructor(private readonly o: TransportSecurityOptions) {
    this.tlsaAnswers = new TtlCache(
      TLSA_CACHE_MS,
      () => true,
      () => o.clock.now(),
    );
  }

  /**
   * What each MX host (by preference) asks of its connections, null for a host that must not be
   * used; when none may be, the recipients' deferral (RFC 8461 §5: "the message SHOULD NOT be
   * delivered", so it waits and is tried again, never bounced for it).
   */
  async hostsTls(route: string, hosts: string[]): Promise<Array<HostTls | null> | RecipientOutcome> {
    const found = this.o.sts ? await this.o.sts.policyFor(route) : null;
    const sts = found && found.mode !== 'none' ? found : null;
    const plans = await Promise.all(hosts.map((h) => this.plan(route, h, sts)));
    if (!plans.length || plans.some((p) => 'use' in p)) return plans.map((p) => ('use' in p ? p.use : null));
    return {
      kind: 'deferred',
      wait: 'tls',
      reply: refusal(
        plans.filter((p): p is Extract<HostPlan, { skip: string }> => 'skip' in p),
        sts,
      ),
    };
  }

  private async plan(route: string, mx: string, sts: StsPolicy | null): Promise<HostPlan> {
    const verdict = stsVerdict(sts, mx);
    const stsRef = (testing: boolean): TlsPolicyRef => ({
      type: 'sts',
      domain: route,
      testing,
      ...(testing && !verdict.mxMatches ? { mxMismatch: true } : {}),
      strings: stsPolicyReportStrings(sts!),
    });
    if (!verdict.allowed) {
      // §4.1: an MX host the enforced policy does not list is not used at all
      this.o.report?.record(stsRef(false), { mxHost: mx, sendingIp: '', receivingIp: '' }, 'validation-failure');
      return { skip: mx, mismatch: true, policy: { type: 'sts', domain: route } };
    }
    const dane = this.o.tlsa ? await this.tlsaOf(mx) : null;
    if (dane?.kind === 'failed')
      return {
        skip: `TLSA lookup for _25._tcp.${mx} failed (${dane.reason})`,
        policy: { type: 'tlsa', domain: route },
      };
    // where both apply, DANE is used for a host with validated TLSA records: it is anchored in
    // DNSSEC rather than in the CAs, and its records name the very key the host presents
    if (dane?.kind === 'secure') {
      const records = dane.rdata.map(parseTlsaRdata).filter((t): t is Tlsa => t !== null);
      const policy: TlsPolicyRef = { type: 'tlsa', domain: route, testing: false, strings: records.map(tlsaToString) };
      // §2.2: a validated TLSA RRset makes TLS mandatory, whether or not any record is usable
      return { use: { tls: 'enforced', dane: records, policy } };
    }
    if (verdict.requirePkix) return { use: { tls: 'enforced', verifyCertificate: true, policy: stsRef(false) } };
    if (verdict.report) return { use: { policy: stsRef(true) } };
    return { use: {} };
  }

  private tlsaOf(mx: string): Promise<TlsaAnswer> {
    return this.tlsaAnswers.get(mx, () => this.o.tlsa!.lookup(mx));
  }
}

/** Why no MX host could be used: the hosts the policy does not list, or the first host's failure. */
function refusal(skipped: Array<Extract<HostPlan, { skip: string }>>, sts: StsPolicy | null): string {
  const mismatched = skipped.filter((s) => s.mismatch).map((s) => s.skip);
  if (mismatched.length === skipped.length && sts) {
    const verb = mismatched.length > 1 ? 'do' : 'does';
    return policyReply(skipped[0].policy, `${mismatched.join(', ')} ${verb} not match (mx: ${sts.mx.join(', ')})`);
  }
  const first = skipped.find((s) => !s.mismatch) ?? skipped[0];
  return policyReply(first.policy, first.skip);
}
