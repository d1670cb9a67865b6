// MTA-STS (RFC 8461), the pure part: the `_mta-sts` TXT record, the policy file, MX matching, the
// cache decision and what a policy asks of one delivery. DNS lookups and the HTTPS fetch are done by
// the caller, which hands the fetched text in.

export interface StsPolicy {
  version: 'STSv1';
  mode: 'enforce' | 'testing' | 'none';
  /** the "mx" patterns as published (trimmed): exact names or "*.suffix" */
  mx: string[];
  maxAgeSeconds: number;
}

export interface StsCached {
  /** the TXT record's id the policy was fetched under (§3.1) */
  id: string;
  /** when it was fetched, in ms since the epoch (as Date.now()) */
  fetchedAt: number;
  policy: StsPolicy;
}

export interface StsVerdict {
  /** false: this MX must not be used (enforce and the MX matches no pattern, §5) */
  allowed: boolean;
  /** STARTTLS is mandatory: no plaintext fallback (§5 enforce) */
  requireTls: boolean;
  /** the certificate must chain to a trusted CA and carry the MX name as DNS-ID (§4.2) */
  requirePkix: boolean;
  /** failures are reportable through TLSRPT (§6: all modes but "none") */
  report: boolean;
  /** whether the MX matched the policy's patterns (false with no policy); testing mode reports a mismatch */
  mxMatches: boolean;
}

/** §3.3: "a suggested maximum policy size is 64 kilobytes"; we take 64 KiB of UTF-8 as the limit. */
export const STS_MAX_POLICY_BYTES = 64 * 1024;
/** §3.2: max_age is at most 31557600 seconds (one year). */
export const STS_MAX_AGE_LIMIT = 31_557_600;
/** §3.3: "a suggested refresh frequency is once per day". */
export const STS_REFRESH_MS = 24 * 3600 * 1000;

const VERSION_PREFIX = /^v=STSv1[ \t]*(?:;|$)/;
const TXT_ID = /^[A-Za-z0-9]{1,32}$/;
// §3.1 sts-ext-name / sts-ext-value; the same name grammar as §3.2 sts-policy-ext-name
const EXT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$/;
const TXT_EXT_VALUE = /^[\x21-\x3a\x3c\x3e-\x7e]+$/;
// §3.2 sts-policy-mx-value = ["*."] Domain, Domain per RFC 5321 §4.1.2 (Let-dig [Ldh-str] labels)
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?';
const MX_PATTERN = new RegExp(`^(?:\\*\\.)?${LABEL}(?:\\.${LABEL})*\\.?$`);

/**
 * The `_mta-sts.<domain>` TXT answer (each record as its strings, as dns.resolveTxt gives them).
 * §3.1: the strings of one record are concatenated without spaces; records not beginning with
 * "v=STSv1" are discarded; no such record → null (no policy); more than one, or a syntactically
 * invalid one → an error, which callers treat as "no available policy" (and may report).
 */
export function parseStsTxt(records: string[][]): { id: string } | { error: string } | null {
  // Errata 6285: the ABNF allows whitespace before the ";" though the prose says "v=STSv1;", so a
  // record is a candidate when "v=STSv1" is followed by optional WSP and ";" (or ends there).
  const candidates = records.map((r) => r.join('')).filter((t) => VERSION_PREFIX.test(t));
  if (candidates.length === 0) return null;
  if (candidates.length > 1) return { error: `${candidates.length} v=STSv1 TXT records (exactly one allowed)` };
  const record = candidates[0];
  // §3.1: MTA-STS TXT records MUST be US-ASCII
  if (!/^[\x20-\x7e\t]*$/.test(record)) return { error: 'TXT record is not printable US-ASCII' };
  const fields = record
    .split(';')
    .map((f) => f.replace(/^[ \t]+|[ \t]+$/g, ''))
    .slice(1);
  // a single trailing delimiter is allowed ([sts-field-delim]); an empty field elsewhere is not
  if (fields.length > 0 && fields[fields.length - 1] === '') fields.pop();
  let id: string | undefined;
  for (const field of fields) {
    const eq = field.indexOf('=');
    const name = eq > 0 ? field.slice(0, eq) : '';
    const value = field.slice(eq + 1);
    if (!EXT_NAME.test(name) || !TXT_EXT_VALUE.test(value)) return { error: `malformed field "${field}"` };
    // §3.2 (last paragraph, for TXT records and policies alike): a repeated field → the first wins
    if (name === 'id' && id === undefined) {
      if (!TXT_ID.test(value)) return { error: `id "${value}" is not 1-32 letters and digits` };
      id = value;
    }
  }
  if (id === undefined) return { error: 'no id field' };
  return { id };
}

/**
 * The policy body fetched from stsPolicyUrl() (§3.2): key/value lines separated by LF or CRLF
 * (sts-policy-term = LF / CRLF); "version", "mode" and "max_age" required; one or more "mx"
 * unless mode is "none"; unknown keys ignored; a repeated key other than "mx" → the first wins;
 * values trimmed. Blank lines are skipped (the ABNF has none, but they are harmless and common
 * at the end of hand-written files).
 */
export function parseStsPolicy(text: string): StsPolicy | { error: string } {
  if (Buffer.byteLength(text, 'utf8') > STS_MAX_POLICY_BYTES) {
    return { error: `policy larger than ${STS_MAX_POLICY_BYTES} bytes` };
  }
  const first = new Map<string, string>();
  const mx: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') continue;
    const colon = line.indexOf(':');
    const key = colon > 0 ? line.slice(0, colon) : '';
    // keys are case-sensitive (%s"version" etc.) and start the line
    if (!EXT_NAME.test(key)) return { error: `malformed line "${line.slice(0, 80)}"` };
    const value = line.slice(colon + 1).trim();
    if (key === 'mx') mx.push(value);
    else if (!first.has(key)) first.set(key, value);
  }
  return checkPolicyFields(first, mx);
}

function checkPolicyFields(fields: Map<string, string>, mx: string[]): StsPolicy | { error: string } {
  const version = fields.get('version');
  if (version !== 'STSv1') return { error: version === undefined ? 'no version' : `version "${version}"` };
  const mode = fields.get('mode');
  if (mode !== 'enforce' && mode !== 'testing' && mode !== 'none') {
    return { error: mode === undefined ? 'no mode' : `mode "${mode}"` };
  }
  const maxAge = fields.get('max_age');
  if (maxAge === undefined) return { error: 'no max_age' };
  // sts-policy-max-age-value = 1*10(DIGIT), "maximum value of 31557600"
  if (!/^[0-9]{1,10}$/.test(maxAge) || Number(maxAge) > STS_MAX_AGE_LIMIT) {
    return { error: `max_age "${maxAge}" is not an integer in 0..${STS_MAX_AGE_LIMIT}` };
  }
  const bad = mx.find((p) => !MX_PATTERN.test(p));
  if (bad !== undefined) return { error: `mx "${bad}" is not a host name or *.suffix pattern` };
  if (mx.length === 0 && mode !== 'none') return { error: `mode ${mode} without any mx` };
  return { version, mode, mx, maxAgeSeconds: Number(maxAge) };
}

function normalizeHost(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '');
}

/**
 * §4.1: does the MX host match one of the policy's "mx" patterns? Exact (case-insensitive) match,
 * or "*.example.com" matching exactly one whole left-most label: "mail.example.com" yes,
 * "example.com" and "a.b.example.com" no. A trailing root dot on either side is ignored.
 */
export function mxMatchesPolicy(mxHost: string, patterns: string[]): boolean {
  const host = normalizeHost(mxHost);
  if (host === '') return false;
  return patterns.some((raw) => {
    const pattern = normalizeHost(raw);
    if (!pattern.startsWith('*.')) return pattern !== '' && pattern === host;
    const suffix = pattern.slice(1); // ".example.com"
    if (suffix.length < 2 || !host.endsWith(suffix)) return false;
    const label = host.slice(0, host.length - suffix.length);
    return label !== '' && !label.includes('.');
  });
}

/** §3.2: the policy lives at https://mta-sts.<Policy Domain>/.well-known/mta-sts.txt */
export function stsPolicyUrl(domain: string): string {
  return `https://mta-sts.${normalizeHost(domain)}/.well-known/mta-sts.txt`;
}

/** §3.2 max_age: a policy is good for max_age seconds after the fetch. */
export function stsCacheValid(cached: StsCached | null, now: number): cached is StsCached {
  return cached !== null && now < cached.fetchedAt + cached.policy.maxAgeSeconds * 1000;
}

/**
 * §5.1 step 1 and §3.1/§3.3: with a TXT id equal to the unexpired cached policy's → use it; a
 * different id or an expired cache → fetch. Without a usable TXT record (none, or invalid) the
 * cached policy stays in force until it expires ("the absence of a usable TXT record is not by
 * itself sufficient to remove a sender's previously cached policy"); with no cache → no policy.
 */
export function stsCacheDecision(
  cached: StsCached | null,
  txt: { id: string } | { error: string } | null,
  now: number,
): 'use_cached' | 'fetch' | 'none' {
  const valid = stsCacheValid(cached, now);
  if (txt === null || 'error' in txt) return valid ? 'use_cached' : 'none';
  return valid && cached.id === txt.id ? 'use_cached' : 'fetch';
}

/**
 * §3.3: "if no 'live' policy can be ... fetched via HTTPS, but a valid (non-expired) policy exists
 * in the sender's cache, the sender MUST apply that cached policy"; otherwise delivery goes on as
 * though the domain had no MTA-STS.
 */
export function stsOnFetchFailure(cached: StsCached | null, now: number): StsPolicy | null {
  return stsCacheValid(cached, now) ? cached.policy : null;
}

/**
 * §3.3: MTAs SHOULD refresh cached policies before they expire, about once a day, even when the
 * TXT id is unchanged; a failed refresh keeps the cached policy (stsOnFetchFailure).
 */
export function stsShouldRefresh(cached: StsCached | null, now: number): boolean {
  return stsCacheValid(cached, now) && now - cached.fetchedAt >= STS_REFRESH_MS;
}

/**
 * What the applied policy (null: none) asks of delivery to one MX host (§4, §5):
 * enforce → the MX must match a pattern (else it is treated as unusable, §8.4) and TLS with PKIX
 * validation of the MX name is mandatory; testing → deliver as without a policy but report
 * failures (§5, §6); none or no policy → nothing.
 */
export function stsVerdict(policy: StsPolicy | null, mxHost: string): StsVerdict {
  if (policy === null || policy.mode === 'none') {
    return { allowed: true, requireTls: false, requirePkix: false, report: false, mxMatches: false };
  }
  const mxMatches = mxMatchesPolicy(mxHost, policy.mx);
  if (policy.mode === 'testing') {
    return { allowed: true, requireTls: false, requirePkix: false, report: true, mxMatches };
  }
  return { allowed: mxMatches, requireTls: true, requirePkix: true, report: true, mxMatches };
}

/**
 * RFC 8460 §4.5: the policy as TLSRPT's "policy-string", one "key: value" string per line, each
 * "mx" its own element.
 */
export function stsPolicyReportStrings(policy: StsPolicy): string[] {
  return [
    `version: ${policy.version}`,
    `mode: ${policy.mode}`,
    ...policy.mx.map((m) => `mx: ${m}`),
    `max_age: ${policy.maxAgeSeconds}`,
  ];
}
