import { checkServerIdentity, type DetailedPeerCertificate, type TLSSocket } from 'node:tls';
import { daneUsable, daneVerify, type PeerCert, type Tlsa } from './dane.js';
import type { TlsResultType } from './tls-report.js';

// What an MTA-STS or DANE policy makes of one SMTP session (smtp-pool.ts): the verdict on the TLS
// session once STARTTLS is done and before MAIL FROM, the meaning of a failed connection, the
// reply a deferred recipient gets, and what TLS-RPT (RFC 8460) counts.

/** The policy a destination is used under. */
export interface TlsPolicyRef {
  /** sts: MTA-STS (RFC 8461); tlsa: DANE (RFC 7672) */
  type: 'sts' | 'tlsa';
  /** the recipient domain the policy belongs to, the TLS-RPT policy domain */
  domain: string;
  /** MTA-STS testing (RFC 8461 §5): failures are counted, delivery goes on as without the policy */
  testing: boolean;
  /** testing: the MX host matches none of the policy's mx patterns (RFC 8461 §4.1) */
  mxMismatch?: boolean;
  /** RFC 8460 §4.5 policy-string: the policy's lines, or each TLSA record */
  strings: string[];
}

/** The destination as the verdicts see it (smtp-pool.ts's Destination). */
export interface PolicyDestination {
  host: string;
  servername?: string;
  localAddress?: string;
  dane?: Tlsa[];
  policy?: TlsPolicyRef;
}

export interface SessionHosts {
  mxHost: string;
  sendingIp: string;
  receivingIp: string;
}

/** Counts sessions for TLS-RPT (tls-rpt-counter.ts). */
export interface TlsSessionRecorder {
  record(policy: TlsPolicyRef, session: SessionHosts, result: TlsResultType | 'success'): void;
}

/** A recipient's delivery waits: the policy refused every usable MX host, or the session (RFC 8461 §5, RFC 7672 §2.2). */
export class TlsPolicyError extends Error {
  constructor(readonly reply: string) {
    super(reply);
    this.name = 'TlsPolicyError';
  }
}

export type SessionVerdict = { result: 'success' } | { result: TlsResultType; reason: string; refuse: boolean };

const mxOf = (d: PolicyDestination) => d.servername ?? d.host;

/** The reply of a recipient deferred by a policy: 4.7.5 "cryptographic failure" (RFC 3463 §3.8). */
export function policyReply(policy: Pick<TlsPolicyRef, 'type' | 'domain'>, reason: string): string {
  return policy.type === 'tlsa'
    ? `451 4.7.5 DANE: ${reason}`
    : `451 4.7.5 MTA-STS policy of ${policy.domain}: ${reason}`;
}

/** The chain the server presented, leaf first (getPeerCertificate(true) links each to its issuer). */
function peerChain(socket: TLSSocket): PeerCert[] {
  const chain: PeerCert[] = [];
  let c: DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  // a self-signed certificate is its own issuer
  while (c?.raw && !chain.some((x) => x.raw.equals(c!.raw))) {
    chain.push({ raw: c.raw });
    c = c.issuerCertificate;
  }
  return chain;
}

/**
 * The session once set up (after STARTTLS and EHLO, before MAIL FROM). DANE: the certificate
 * must match a usable TLSA record (RFC 7672 §3), unless none is usable, when TLS alone is required
 * (§2.2). MTA-STS enforce was checked in the handshake (rejectUnauthorized); testing notes what
 * enforce would have refused (RFC 8461 §5) and lets the session go on.
 */
export function judgeSession(d: PolicyDestination, socket: TLSSocket | null): SessionVerdict {
  const policy = d.policy;
  const mx = mxOf(d);
  if (!policy) return { result: 'success' };
  if (!socket) {
    const reason = `${mx} does not offer STARTTLS`;
    return { result: 'starttls-not-supported', reason, refuse: !policy.testing };
  }
  if (policy.type === 'tlsa') {
    if (!daneUsable(d.dane ?? []).length) return { result: 'success' };
    const r = daneVerify(d.dane ?? [], peerChain(socket), mx);
    if (r.ok) return { result: 'success' };
    const detail = r.reason === 'no TLSA record matches the presented certificates' ? '' : ` (${r.reason})`;
    return { result: 'tlsa-invalid', reason: `certificate of ${mx} matches no TLSA record${detail}`, refuse: true };
  }
  if (!policy.testing) return { result: 'success' };
  if (policy.mxMismatch) return { result: 'validation-failure', reason: `${mx} does not match`, refuse: false };
  const code = socket.authorizationError ? String(socket.authorizationError) : null;
  if (code)
    return { result: certificateResult(code), reason: `certificate not valid for ${mx} (${code})`, refuse: false };
  const wrongName = checkServerIdentity(mx, socket.getPeerCertificate());
  if (wrongName)
    return { result: 'certificate-host-mismatch', reason: `certificate not valid for ${mx}`, refuse: false };
  return { result: 'success' };
}

type SmtpError = Error & { code?: string; originalCode?: string; command?: string; response?: string };

/**
 * A connection that failed under a policy: TLS refused or broken is the policy's failure (the
 * recipient is deferred with a reply that says so); anything else (refused, timed out) is not.
 */
export function judgeFailure(d: PolicyDestination, err: SmtpError): { result: TlsResultType; reason: string } | null {
  const mx = mxOf(d);
  if (!d.policy) return null;
  // nodemailer sends STARTTLS when TLS is required, offered or not: a refusal of it is the server's "no"
  if (err.code === 'ETLS' && err.command === 'STARTTLS')
    return { result: 'starttls-not-supported', reason: `${mx} does not offer STARTTLS` };
  const code = err.originalCode ?? err.code ?? '';
  if (!TLS_CODE.test(code) && err.code !== 'ETLS') return null;
  if (d.policy.type === 'tlsa')
    return { result: 'validation-failure', reason: `TLS with ${mx} failed (${err.message})` };
  return { result: certificateResult(code), reason: `certificate not valid for ${mx} (${err.message})` };
}

// OpenSSL's verdicts on a certificate and Node's TLS errors (ERR_TLS_CERT_ALTNAME_INVALID, EPROTO)
const TLS_CODE = /CERT|^UNABLE_TO_|^ERR_(TLS|SSL)_|^EPROTO$|^HOSTNAME_MISMATCH$|^INVALID_(CA|PURPOSE)$/;

/** RFC 8460 §4.3.1's result type of a certificate verdict. */
function certificateResult(code: string): TlsResultType {
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH') return 'certificate-host-mismatch';
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') return 'certificate-expired';
  if (/SELF_SIGNED|^UNABLE_TO_GET_ISSUER|^UNABLE_TO_VERIFY_LEAF|UNTRUSTED|REJECTED|^INVALID_CA$/.test(code))
    return 'certificate-not-trusted';
  return 'validation-failure';
}

type Socketed = { secure?: boolean };
const socketOf = (conn: Socketed) => (conn as { _socket?: TLSSocket })._socket ?? null;

/** The session's verdict (judgeSession), counted for TLS-RPT: the error that ends it, or null to go on. */
export function checkSession(d: PolicyDestination, conn: Socketed, report?: TlsSessionRecorder): TlsPolicyError | null {
  if (!d.policy) return null;
  // nodemailer's socket: the TLS socket once STARTTLS is done
  const socket = conn.secure ? socketOf(conn) : null;
  const verdict = judgeSession(d, socket);
  report?.record(d.policy, sessionHosts(d, socket), verdict.result);
  return verdict.result !== 'success' && verdict.refuse
    ? new TlsPolicyError(policyReply(d.policy, verdict.reason))
    : null;
}

/** A failed connection: under a policy that requires TLS, a TLS failure becomes the policy's refusal. */
export function policyFailure(d: PolicyDestination, conn: Socketed, e: Error, report?: TlsSessionRecorder): Error {
  if (!d.policy || e instanceof TlsPolicyError) return e;
  const judged = judgeFailure(d, e);
  if (!judged) return e;
  report?.record(d.policy, sessionHosts(d, socketOf(conn)), judged.result);
  // testing (RFC 8461 §5): counted, and the failure stays what it was without the policy
  return d.policy.testing ? e : new TlsPolicyError(policyReply(d.policy, judged.reason));
}

function sessionHosts(d: PolicyDestination, socket: { localAddress?: string; remoteAddress?: string } | null) {
  return {
    mxHost: mxOf(d),
    sendingIp: socket?.localAddress ?? d.localAddress ?? '',
    receivingIp: socket?.remoteAddress ?? d.host,
  };
}
