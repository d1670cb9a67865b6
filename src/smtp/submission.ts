import { ApiError, type ErrorCode } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { RateLimiter } from '../lib/rate-limiter.js';
import { validateBody } from '../lib/validate.js';
import { SendEmailBody } from '../modules/sending/emails/emails.schema.js';
import type { EmailService } from '../modules/sending/emails/emails.service.js';
import { submittedEmail, submittedEmailHere, type Submitted } from '../modules/sending/emails/submitted.js';
import {
  failureLogger,
  listen,
  readData,
  refusalOf,
  smtpError,
  type Listener,
  type ListenerOptions,
} from './listener.js';
import { withCertificate } from './self-signed-tls.js';
import { submissionAuth, type SubmissionAuthDeps } from './submission-auth.js';

export interface SubmissionDeps extends SubmissionAuthDeps {
  /** reads a submitted message (on the parsing pool in serve: docs/security.md); without it, here */
  read?: (job: { raw: Uint8Array; envelope: { from: string; to: string[] } }) => Promise<Submitted>;
  emails: EmailService;
  /** limits.requests_per_second, per key: a message counts as a request */
  limiter: RateLimiter;
}

/** The API's recipient limit (interface §4.1: 50 per field) for the whole envelope. */
const MAX_RECIPIENTS = 50;

/**
 * SMTP submission (CONTRACT §5): AUTH PLAIN or LOGIN with any user name and
 * an API key holding emails:send as the password, over TLS or from a
 * loopback client (submission-auth.ts). A message takes the same
 * acceptance path as POST /v1/emails (EmailService.send) and is answered 250
 * once it is durably stored; a refusal is the API error as an SMTP reply.
 */
export async function startSubmissionListener(options: ListenerOptions, deps: SubmissionDeps): Promise<Listener> {
  const o = await withCertificate(options);
  const auth = submissionAuth(o, deps);
  const logFailure = failureLogger(o);
  return listen(o, {
    authOptional: false,
    authMethods: ['PLAIN', 'LOGIN'],
    // decided per session by submissionAuth: over TLS, or in plain text from loopback
    allowInsecureAuth: true,
    ...auth.handlers,
    onMailFrom(_address, session, cb) {
      // smtp-server asks for AUTH itself, except where the session hides it (no TLS yet)
      if (!auth.principalOf(session))
        return cb(smtpError(530, '5.7.0 authentication required: issue STARTTLS, then AUTH'));
      cb();
    },
    onRcptTo(_address, session, cb) {
      if (session.envelope.rcptTo.length >= MAX_RECIPIENTS)
        return cb(smtpError(452, `4.5.3 too many recipients: at most ${MAX_RECIPIENTS} per message`));
      cb();
    },
    onData(stream, session, cb) {
      readData(stream)
        .then(async (raw) => {
          if (!raw) return cb(smtpError(552, `5.3.4 message larger than ${o.maxBytes} bytes`));
          const principal = auth.principalOf(session);
          if (!principal) return cb(smtpError(530, '5.7.0 authentication required'));
          const wait = deps.limiter.take(principal.key.id);
          if (wait !== null) return cb(smtpError(421, `4.7.0 rate limited: retry in ${wait} s`));
          const envelope = {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
          };
          const { body, idempotencyKey } = deps.read
            ? (submittedEmailHere(raw, envelope) ?? (await deps.read({ raw, envelope })))
            : await submittedEmail(raw, envelope);
          const sent = await deps.emails.send(
            principal,
            validateBody<SendEmailBody>(SendEmailBody, body),
            newId('request'),
            idempotencyKey,
          );
          const id = sent.email?.id ?? (sent.replay?.body as { id?: string } | undefined)?.id ?? '';
          cb(null, `2.0.0 queued as ${id}`);
        })
        .catch((e: unknown) => {
          logFailure(e);
          cb(replyOf(e));
        });
    },
  });
}

/** An API refusal as the SMTP reply that means the same (RFC 3463 codes); a parser's limit 554, a full disk 452. */
export function replyOf(e: unknown): Error {
  if (!(e instanceof ApiError)) return refusalOf(e) ?? smtpError(451, '4.3.0 temporary failure, try again later');
  const text = e.message.replace(/[\r\n]+/g, ' ');
  const code = REPLIES[e.code];
  if (
    e.code === 'validation_error' &&
    e.field?.startsWith('attachments') &&
    /\bMB\b|bytes|too large|at most/i.test(text)
  )
    return smtpError(552, `5.3.4 ${text}`);
  return smtpError(code[0], `${code[1]} ${text}`);
}

const REPLIES: Record<ErrorCode, [number, string]> = {
  validation_error: [550, '5.6.0'],
  invalid_variables: [550, '5.6.0'],
  unauthorized: [535, '5.7.8'],
  forbidden: [550, '5.7.1'],
  account_not_approved: [550, '5.7.1'],
  account_suspended: [550, '5.7.1'],
  plan_limit_reached: [550, '5.7.1'],
  not_found: [550, '5.6.0'],
  idempotency_conflict: [451, '4.3.0'],
  not_schedulable: [550, '5.6.0'],
  domain_already_registered: [550, '5.6.0'],
  contact_exists: [550, '5.6.0'],
  conflict: [451, '4.3.0'],
  payload_too_large: [552, '5.3.4'],
  domain_not_verified: [550, '5.7.1'],
  recipient_suppressed: [550, '5.7.1'],
  quota_exhausted: [452, '4.7.0'],
  daily_limit_exceeded: [452, '4.7.0'],
  rate_limited: [421, '4.7.0'],
  internal_error: [451, '4.3.0'],
  service_unavailable: [421, '4.3.2'],
  storage_full: [452, '4.3.1'],
};
