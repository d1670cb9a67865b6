// SMTP TLS Reporting (RFC 8460), the pure part: the `_smtp._tls` TXT record, the aggregate report
// JSON, its file name and the headers it travels with. Tallying sessions, gzip and delivery (mail
// or HTTPS POST) are the caller's.

/** §4.3: the result types (negotiation, DANE, MTA-STS and general failures). */
export const TLS_RESULT_TYPES = [
  'starttls-not-supported',
  'certificate-host-mismatch',
  'certificate-expired',
  'certificate-not-trusted',
  'validation-failure',
  'tlsa-invalid',
  'dnssec-invalid',
  'dane-required',
  'sts-policy-fetch-error',
  'sts-policy-invalid',
  'sts-webpki-invalid',
] as const;
export type TlsResultType = (typeof TLS_RESULT_TYPES)[number];

export interface TlsFailureTally {
  resultType: TlsResultType;
  sendingMtaIp: string;
  receivingMxHostname: string;
  /** the HELO/EHLO name the receiving MX announced (optional, §4.4) */
  receivingMxHelo?: string;
  receivingIp?: string;
  count: number;
  /** a URI with more about the failure (§4.4 "additional-info-uri") */
  additionalInformation?: string;
  /** a TLS error code or message (§4.3.3), e.g. "X509_V_ERR_CERT_HAS_EXPIRED" */
  failureReasonCode?: string;
}

export interface TlsSessionTally {
  /** the Policy Domain (A-labels, §4.4) */
  policyDomain: string;
  policyType: 'sts' | 'tlsa' | 'no-policy-found';
  /** §4.5: the MTA-STS policy lines, or each TLSA record in presentation format */
  policyString: string[];
  /** §4.4 mx-host: for sts the policy's mx patterns */
  mxHosts: string[];
  /** sessions that negotiated policy-compliant TLS */
  success: number;
  failures: TlsFailureTally[];
  /**
   * failed sessions, when known: §4 says failure types may overlap (one session can fail more than
   * one way), so the sum of the failure counts may exceed it; defaults to that sum
   */
  failureSessions?: number;
}

export interface TlsReportFailureDetail {
  'result-type': TlsResultType;
  'sending-mta-ip'?: string;
  'receiving-mx-hostname'?: string;
  'receiving-mx-helo'?: string;
  'receiving-ip'?: string;
  'failed-session-count': number;
  'additional-information'?: string;
  'failure-reason-code'?: string;
}

export interface TlsReportPolicy {
  policy: {
    'policy-type': TlsSessionTally['policyType'];
    'policy-string'?: string[];
    'policy-domain': string;
    'mx-host'?: string[];
  };
  summary: { 'total-successful-session-count': number; 'total-failure-session-count': number };
  'failure-details': TlsReportFailureDetail[];
}

export interface TlsReport {
  'organization-name': string;
  'date-range': { 'start-datetime': string; 'end-datetime': string };
  'contact-info': string;
  'report-id': string;
  policies: TlsReportPolicy[];
}

/** §5.3/§5.4/§6: the media types of a gzip-compressed and a plain report. */
export const TLSRPT_GZIP_TYPE = 'application/tlsrpt+gzip';
export const TLSRPT_JSON_TYPE = 'application/tlsrpt+json';

/** RFC 3339 §5.6 date-time in UTC, without milliseconds when they are zero. */
function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.000Z$/, 'Z');
}

function failureDetail(f: TlsFailureTally): TlsReportFailureDetail {
  return {
    'result-type': f.resultType,
    // unknown for a failure before any MX was reached (a policy that could not be fetched): left out
    ...(f.sendingMtaIp ? { 'sending-mta-ip': f.sendingMtaIp } : {}),
    ...(f.receivingMxHostname ? { 'receiving-mx-hostname': f.receivingMxHostname } : {}),
    ...(f.receivingMxHelo !== undefined && { 'receiving-mx-helo': f.receivingMxHelo }),
    ...(f.receivingIp !== undefined && { 'receiving-ip': f.receivingIp }),
    'failed-session-count': f.count,
    ...(f.additionalInformation !== undefined && { 'additional-information': f.additionalInformation }),
    ...(f.failureReasonCode !== undefined && { 'failure-reason-code': f.failureReasonCode }),
  };
}

/**
 * §4.4 mx-host is "provided as a JSON array of strings" (Appendix B's example shows a bare string;
 * we follow the normative text). Both it and policy-string are left out when empty, as for
 * "no-policy-found".
 */
function reportPolicy(t: TlsSessionTally): TlsReportPolicy {
  const failed = t.failureSessions ?? t.failures.reduce((n, f) => n + f.count, 0);
  return {
    policy: {
      'policy-type': t.policyType,
      ...(t.policyString.length > 0 && { 'policy-string': t.policyString }),
      'policy-domain': t.policyDomain,
      ...(t.mxHosts.length > 0 && { 'mx-host': t.mxHosts }),
    },
    summary: { 'total-successful-session-count': t.success, 'total-failure-session-count': failed },
    'failure-details': t.failures.map(failureDetail),
  };
}

/**
 * The aggregate report (§4.4), with its exact field names. §4: "policies" is always an array,
 * even for one policy. §4.1: a report SHOULD cover one UTC day, 00:00 to 24:00; the caller picks
 * start and end. contactInfo is an addr-spec whose domain is the submitter (§5.3).
 */
export function buildTlsReport(o: {
  organizationName: string;
  contactInfo: string;
  reportId: string;
  start: Date;
  end: Date;
  policies: TlsSessionTally[];
}): TlsReport {
  return {
    'organization-name': o.organizationName,
    'date-range': { 'start-datetime': rfc3339(o.start), 'end-datetime': rfc3339(o.end) },
    'contact-info': o.contactInfo,
    'report-id': o.reportId,
    policies: o.policies.map(reportPolicy),
  };
}

/**
 * The `_smtp._tls.<domain>` TXT answer (§3): strings of a record concatenated without spaces;
 * records not beginning with "v=TLSRPTv1" discarded; not exactly one left → null (the domain does
 * not implement TLSRPT). rua is a comma-separated list of URIs, of which only mailto: and https:
 * are supported; unknown fields are ignored. No rua, or none usable → null.
 */
export function parseTlsRptTxt(records: string[][]): { rua: string[] } | null {
  const candidates = records.map((r) => r.join('')).filter((t) => /^v=TLSRPTv1[ \t]*(?:;|$)/.test(t));
  if (candidates.length !== 1) return null;
  const fields = candidates[0].split(';').map((f) => f.trim());
  // the first "rua=" wins, as with MTA-STS's repeated fields
  const rua = fields.find((f) => f.startsWith('rua='));
  if (rua === undefined) return null;
  const uris = rua
    .slice(4)
    .split(',')
    .map((u) => u.trim())
    .filter(isReportUri);
  return uris.length > 0 ? { rua: uris } : null;
}

function isReportUri(uri: string): boolean {
  try {
    const u = new URL(uri);
    if (u.protocol === 'https:') return u.hostname !== '';
    return u.protocol === 'mailto:' && /^[^@\s]+@[^@\s]+$/.test(decodeURIComponent(u.pathname));
  } catch {
    return false;
  }
}

/** The mailbox of a `mailto:` rua (RFC 6068: the address before any `?`), or null for any other URI. */
export function ruaMailbox(uri: string): string | null {
  try {
    const u = new URL(uri);
    if (u.protocol !== 'mailto:') return null;
    const address = decodeURIComponent(u.pathname);
    return /^[^@\s,]+@[^@\s,]+$/.test(address) ? address : null;
  } catch {
    return null;
  }
}

function domainName(d: string): string {
  return d.trim().toLowerCase().replace(/\.$/, '');
}

/**
 * §5.1: sender "!" policy-domain "!" begin-timestamp "!" end-timestamp ["!" unique-id] "." extension,
 * timestamps in seconds since the epoch, extension "json.gz" (gzip, §5.2) or "json". unique-id is
 * 1*(ALPHA / DIGIT): other characters are dropped (a UUID loses its hyphens).
 */
export function tlsReportFilename(o: {
  receiver: string;
  submitter: string;
  start: Date;
  end: Date;
  uniqueId?: string;
  gzip?: boolean;
}): string {
  const seconds = (d: Date) => String(Math.floor(d.getTime() / 1000));
  const unique = (o.uniqueId ?? '').replace(/[^A-Za-z0-9]/g, '');
  const parts = [domainName(o.submitter), domainName(o.receiver), seconds(o.start), seconds(o.end)];
  if (unique !== '') parts.push(unique);
  return `${parts.join('!')}.${o.gzip === false ? 'json' : 'json.gz'}`;
}

export interface TlsReportMail {
  subject: string;
  headers: { 'TLS-Report-Domain': string; 'TLS-Report-Submitter': string };
  /** the message's top-level type (§5.3) */
  contentType: string;
  /** the report part: gzip-compressed JSON as an attachment named by tlsReportFilename */
  attachment: { contentType: string; filename: string };
}

/**
 * §5.3: the mail a report travels in: Subject "Report Domain: <policy domain> Submitter: <sender
 * domain> Report-ID: <id-left@id-right>", the TLS-Report-Domain and TLS-Report-Submitter header
 * fields (which SHOULD be DKIM-signed; the submitter MUST be the domain of contact-info), a
 * multipart/report; report-type="tlsrpt" body with the report as application/tlsrpt+gzip. A report
 * id without "@" is made a msg-id by appending "@" and the submitter.
 */
export function tlsReportMailHeaders(o: {
  policyDomain: string;
  submitter: string;
  reportId: string;
  start: Date;
  end: Date;
  uniqueId?: string;
}): TlsReportMail {
  const domain = domainName(o.policyDomain);
  const submitter = domainName(o.submitter);
  const bare = o.reportId.replace(/^<|>$/g, '');
  const msgId = bare.includes('@') ? bare : `${bare}@${submitter}`;
  return {
    subject: `Report Domain: ${domain} Submitter: ${submitter} Report-ID: <${msgId}>`,
    headers: { 'TLS-Report-Domain': domain, 'TLS-Report-Submitter': submitter },
    contentType: 'multipart/report; report-type="tlsrpt"',
    attachment: {
      contentType: TLSRPT_GZIP_TYPE,
      filename: tlsReportFilename({ receiver: domain, submitter, start: o.start, end: o.end, uniqueId: o.uniqueId }),
    },
  };
}

/** §5.4: a gzip-compressed report POSTed over HTTPS. */
export function tlsReportHttpsHeaders(): { 'Content-Type': string } {
  return { 'Content-Type': TLSRPT_GZIP_TYPE };
}
