export const DKIM_SELECTORS = ['ph1', 'ph2', 'ph3'] as const;

import type { ExpectedRecord } from '../../../dns/checks.js';

export type { DnsState, ExpectedRecord } from '../../../dns/checks.js';

export interface RecordSettings {
  domain: string;
  returnPath: string;
  token: string;
  zone: string;
  /** outbound.hostname: the MX of the return path and the host SPF authorises */
  hostname: string;
  publicKeys: Record<string, string>;
}

export const spfValue = (hostname: string) => `v=spf1 a:${hostname} ~all`;
/**
 * Where receivers mail the domain's DMARC aggregate reports (docs/dmarc.md):
 * at its return-path subdomain, whose MX is the appliance, so that the
 * address is in the domain's own organisational domain and needs no
 * external-destination record (RFC 7489 §7.1). The token names the domain.
 */
export const dmarcReportAddress = (token: string, returnPath: string, domain: string) =>
  `dmarc+${token}@${returnPath}.${domain}`;

/** The starting policy: monitoring only, with reports to the appliance. */
export const dmarcStart = (reportAddress: string) => `v=DMARC1; p=none; rua=mailto:${reportAddress};`;

/**
 * The records of interface §2.2: three DKIM CNAMEs into the appliance's zone
 * (required), then the recommended MAIL FROM (MX + SPF on the return-path
 * subdomain, for SPF alignment) and a monitoring-only DMARC policy.
 */
export function expectedRecords(s: RecordSettings): ExpectedRecord[] {
  const rp = `${s.returnPath}.${s.domain}`;
  return [
    ...DKIM_SELECTORS.map((sel): ExpectedRecord => ({
      key: `dkim:${sel}`,
      purpose: 'dkim',
      required: true,
      type: 'CNAME',
      name: `${sel}._domainkey.${s.domain}`,
      value: `${sel}.${s.token}.${s.zone}`,
      ...(s.publicKeys[sel] ? { publicKey: s.publicKeys[sel] } : {}),
    })),
    {
      key: 'return_path:mx',
      purpose: 'return_path',
      required: false,
      type: 'MX',
      name: rp,
      value: s.hostname,
      priority: 10,
    },
    { key: 'spf:txt', purpose: 'spf', required: false, type: 'TXT', name: rp, value: spfValue(s.hostname) },
    {
      key: 'dmarc:txt',
      purpose: 'dmarc',
      required: false,
      type: 'TXT',
      name: `_dmarc.${s.domain}`,
      value: dmarcStart(dmarcReportAddress(s.token, s.returnPath, s.domain)),
    },
  ];
}
