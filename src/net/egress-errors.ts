// How a request to a user-given URL fails (egress.ts): the refusals of the guard, the failures of the request.

export type EgressReason = 'invalid_url' | 'not_https' | 'private_address' | 'dns_failure';

/** The URL is refused before any connection is made. */
export class EgressError extends Error {
  constructor(
    readonly reason: EgressReason,
    message: string,
  ) {
    super(message);
    this.name = 'EgressError';
  }
}

/** refused: no connection, or it broke off (refused, reset, unreachable); tls: the handshake or the certificate failed */
export type EgressFailure = 'timeout' | 'too_large' | 'aborted' | 'refused' | 'tls';

/** The URL was allowed but no complete answer came back. */
export class EgressRequestError extends Error {
  constructor(
    readonly reason: EgressFailure,
    message: string,
  ) {
    super(message);
    this.name = 'EgressRequestError';
  }
}

// OpenSSL's certificate verdicts (DEPTH_ZERO_SELF_SIGNED_CERT, CERT_HAS_EXPIRED, UNABLE_TO_VERIFY_LEAF_SIGNATURE,
// HOSTNAME_MISMATCH, …) and Node's own TLS and SSL codes (ERR_TLS_CERT_ALTNAME_INVALID, ERR_SSL_WRONG_VERSION_NUMBER)
const TLS_CODE =
  /^ERR_(TLS|SSL)_|CERT|CRL|^UNABLE_TO_|^INVALID_(CA|PURPOSE)$|^PATH_LENGTH_EXCEEDED$|^HOSTNAME_MISMATCH$|^EPROTO$/;
// undici's own clocks (connect, headers, body) besides ours
const TIMEOUT_CODE = /^(UND_ERR_(CONNECT|HEADERS|BODY)_TIMEOUT|ETIMEDOUT)$/;

/** A connection that failed, by the code of Node's or undici's error. */
export function networkFailure(code: string | undefined): EgressFailure {
  if (code && TLS_CODE.test(code)) return 'tls';
  if (code && TIMEOUT_CODE.test(code)) return 'timeout';
  return 'refused';
}

export type FailureWord = 'timeout' | 'refused' | 'tls' | 'too large' | 'blocked' | 'dns';

/**
 * Why a request to a user-given URL failed, in one stable word that tells
 * nothing of the peer (no address, certificate or error text): what an
 * answer to a client may say. Null for what is no failure of a request: a
 * URL refused for its form (invalid_url, not_https), whose message says so,
 * or any other error.
 */
export function failureWord(e: unknown): FailureWord | null {
  if (e instanceof EgressError)
    return e.reason === 'private_address' ? 'blocked' : e.reason === 'dns_failure' ? 'dns' : null;
  if (!(e instanceof EgressRequestError)) return null;
  switch (e.reason) {
    case 'too_large':
      return 'too large';
    case 'tls':
    case 'refused':
    case 'timeout':
      return e.reason;
    case 'aborted':
      // cut short from outside (a shutdown): as with a timeout, no complete answer came in time
      return 'timeout';
  }
}
