// DANE for SMTP (RFC 7672) with TLSA matching (RFC 6698, updated by RFC 7671), the pure part:
// which TLSA records count, and whether a presented certificate chain satisfies them. The
// DNSSEC-validated TLSA lookup and the TLS handshake are the caller's; node:crypto's
// X509Certificate is used only for parsing, hashing and signature checks (no I/O).
import { createHash, X509Certificate } from 'node:crypto';

export interface Tlsa {
  /** RFC 6698 §2.1.1: 0 PKIX-TA, 1 PKIX-EE, 2 DANE-TA, 3 DANE-EE */
  usage: number;
  /** §2.1.2: 0 full certificate, 1 SubjectPublicKeyInfo */
  selector: number;
  /** §2.1.3: 0 exact, 1 SHA2-256, 2 SHA2-512 */
  matchingType: number;
  data: Buffer;
}

/** One certificate as tls.TLSSocket.getPeerCertificate(true) gives it (raw DER; pubkey as SPKI DER). */
export interface PeerCert {
  raw: Buffer;
  /** the SubjectPublicKeyInfo DER, when known (e.g. getPeerCertificate's `pubkey`, or a raw public key) */
  publicKeyDer?: Buffer;
}

export interface DaneVerifyOptions {
  /**
   * RFC 7672 §3.2.2: reference identifiers besides the MX host name for DANE-TA(2) name checks,
   * e.g. the TLSA base domain after CNAME expansion of the MX host, or the next-hop domain when
   * there was no MX record.
   */
  referenceNames?: string[];
  /** the time to check validity dates against under DANE-TA(2); defaults to now */
  now?: Date;
}

export type DaneResult = { ok: true; matched: Tlsa } | { ok: false; reason: string };

const DANE_TA = 2;
const DANE_EE = 3;
// RFC 6698 §2.1.3: the digest lengths of SHA2-256 and SHA2-512
const DIGEST_LENGTH: Record<number, number> = { 1: 32, 2: 64 };
// path building gives up beyond this many certificates between the leaf and the trust anchor
const MAX_PATH = 8;

/**
 * The records an SMTP client uses (RFC 7672 §3.1.3): only DANE-TA(2) and DANE-EE(3), since
 * PKIX-TA(0)/PKIX-EE(1) presume a CA set the sender cannot be expected to share; selectors 0/1 and
 * matching types 0/1/2 only; digests of the wrong length are malformed (RFC 6698 §2.1.3). Then
 * digest algorithm agility (RFC 7671 §9): for each usage and selector, Full(0) records are kept and
 * of the digests only the strongest present (SHA2-512 over SHA2-256), so an attacker who can break
 * the weaker digest cannot match a record the publisher has superseded.
 */
export function daneUsable(records: Tlsa[]): Tlsa[] {
  const wellFormed = records.filter(
    (r) =>
      (r.usage === DANE_TA || r.usage === DANE_EE) &&
      (r.selector === 0 || r.selector === 1) &&
      (r.matchingType === 0 ? r.data.length > 0 : r.data.length === DIGEST_LENGTH[r.matchingType]),
  );
  const has512 = new Set(wellFormed.filter((r) => r.matchingType === 2).map((r) => `${r.usage}/${r.selector}`));
  return wellFormed.filter((r) => r.matchingType !== 1 || !has512.has(`${r.usage}/${r.selector}`));
}

/**
 * RFC 7672 §2.2: a non-empty DNSSEC-validated TLSA RRset makes TLS mandatory, even when none of
 * its records is usable (then TLS goes on without authentication, never in plaintext). Pass only
 * validated ("secure") records.
 */
export function daneRequiresTls(records: Tlsa[]): boolean {
  return records.length > 0;
}

/** RFC 6698 §2.1: usage, selector and matching type one byte each, the association data after. */
export function parseTlsaRdata(buf: Buffer): Tlsa | null {
  if (buf.length < 4) return null;
  return { usage: buf[0], selector: buf[1], matchingType: buf[2], data: Buffer.from(buf.subarray(3)) };
}

/** RFC 8460 §4.5: a TLSA record's RDATA in presentation format, for TLSRPT's policy-string. */
export function tlsaToString(t: Tlsa): string {
  return `${t.usage} ${t.selector} ${t.matchingType} ${t.data.toString('hex').toUpperCase()}`;
}

function parseCert(raw: Buffer): X509Certificate | undefined {
  try {
    return raw.length > 0 ? new X509Certificate(raw) : undefined;
  } catch {
    return undefined;
  }
}

/** RFC 6698 §2.1.2: the bytes a selector picks out of one certificate (undefined: not available). */
function selected(cert: PeerCert, x509: X509Certificate | undefined, selector: number): Buffer | undefined {
  if (selector === 0) return cert.raw.length > 0 ? cert.raw : undefined;
  // the key the certificate itself carries wins over a separately given one (a raw public key,
  // RFC 7250, has no certificate to parse)
  return x509?.publicKey.export({ type: 'spki', format: 'der' }) ?? cert.publicKeyDer;
}

/** RFC 6698 §2.1.3: exact match or the SHA2-256/SHA2-512 digest. */
function associationMatches(t: Tlsa, content: Buffer | undefined): boolean {
  if (content === undefined) return false;
  if (t.matchingType === 0) return content.equals(t.data);
  const digest = createHash(t.matchingType === 1 ? 'sha256' : 'sha512')
    .update(content)
    .digest();
  return digest.equals(t.data);
}

/** child was issued by parent: names/key identifiers agree, parent is a CA, and the signature verifies. */
function issuedBy(child: X509Certificate, parent: X509Certificate): boolean {
  try {
    return parent.ca && child.checkIssued(parent) && child.verify(parent.publicKey);
  } catch {
    return false;
  }
}

/**
 * The certificates from the leaf up to (not including) the trust anchor, each issued by the next,
 * built from the presented certificates in any order (TLS 1.3 lets servers send them unordered);
 * null when the leaf does not chain to the anchor.
 */
function pathTo(leaf: X509Certificate, anchor: X509Certificate, pool: X509Certificate[]): X509Certificate[] | null {
  const walk = (path: X509Certificate[]): X509Certificate[] | null => {
    const current = path[path.length - 1];
    if (issuedBy(current, anchor)) return path;
    if (path.length >= MAX_PATH) return null;
    for (const next of pool) {
      if (next === anchor || path.includes(next) || !issuedBy(current, next)) continue;
      const found = walk([...path, next]);
      if (found) return found;
    }
    return null;
  };
  return walk([leaf]);
}

function withinValidity(cert: X509Certificate, now: Date): boolean {
  const t = now.getTime();
  return t >= new Date(cert.validFrom).getTime() && t <= new Date(cert.validTo).getTime();
}

/**
 * RFC 7672 §3.2.3: the leaf's DNS-IDs (its CN only when it has no DNS SAN, node's 'default') must
 * match a reference identifier; "*" only as the whole left-most label.
 */
function nameMatches(leaf: X509Certificate, names: string[]): boolean {
  return names.some(
    (n) =>
      leaf.checkHost(n.replace(/\.$/, ''), {
        subject: 'default',
        wildcards: true,
        partialWildcards: false,
        multiLabelWildcards: false,
        singleLabelSubdomains: false,
      }) !== undefined,
  );
}

/**
 * DANE-TA(2) (RFC 7672 §3.1.2, RFC 7671 §5.2): the record names a trust anchor that the server
 * includes in its chain; the leaf must chain to it by signature, the certificates below the
 * anchor must be within their validity dates (RFC 5280 path validation; the anchor's own dates are
 * not part of it), and the leaf must carry a reference identifier (§3.2). Returns null when
 * satisfied, '' when no presented certificate matches the record, else why the match failed.
 */
function verifyTa(
  t: Tlsa,
  chain: PeerCert[],
  x509s: Array<X509Certificate | undefined>,
  names: string[],
  now: Date,
): string | null {
  const leaf = x509s[0];
  if (!leaf) return 'leaf certificate does not parse';
  let reason = '';
  for (let i = 1; i < chain.length; i++) {
    const anchor = x509s[i];
    if (!anchor || !associationMatches(t, selected(chain[i], anchor, t.selector))) continue;
    const pool = x509s.filter((c): c is X509Certificate => c !== undefined);
    const path = pathTo(leaf, anchor, pool);
    if (!path) reason = 'leaf certificate does not chain to the DANE-TA trust anchor';
    else if (!path.every((c) => withinValidity(c, now))) reason = 'certificate expired or not yet valid';
    else if (!nameMatches(leaf, names)) reason = `certificate does not match ${names.join(' or ')}`;
    else return null;
  }
  return reason;
}

/**
 * Does the presented chain (leaf first, as getPeerCertificate(true) gives it) satisfy the TLSA
 * RRset of the MX host? Only usable records count (daneUsable); any one match authenticates
 * (RFC 6698 §4.1). DANE-EE(3) matches the leaf alone and, per RFC 7672 §3.1.1 (RFC 7671 §5.1),
 * without name checks, validity dates or a CA: the DNSSEC-signed record binds the key to the name.
 * DANE-TA(2) matches a certificate the server sent above the leaf (§3.1.2: servers MUST include
 * the TA certificate), then requires chaining, dates and a name match to mxHost or
 * opts.referenceNames.
 */
export function daneVerify(
  records: Tlsa[],
  chain: PeerCert[],
  mxHost: string,
  opts: DaneVerifyOptions = {},
): DaneResult {
  const usable = daneUsable(records);
  if (usable.length === 0) return { ok: false, reason: 'no usable TLSA records' };
  if (chain.length === 0) return { ok: false, reason: 'no certificate presented' };
  const x509s = chain.map((c) => parseCert(c.raw));
  const names = [mxHost, ...(opts.referenceNames ?? [])];
  const now = opts.now ?? new Date();
  let reason = 'no TLSA record matches the presented certificates';
  for (const t of usable) {
    if (t.usage === DANE_EE) {
      if (associationMatches(t, selected(chain[0], x509s[0], t.selector))) return { ok: true, matched: t };
      continue;
    }
    const failed = verifyTa(t, chain, x509s, names, now);
    if (failed === null) return { ok: true, matched: t };
    if (failed !== '') reason = failed;
  }
  return { ok: false, reason };
}
