import type { SMTPServerSession } from 'smtp-server';
import { ApiError, type ErrorCode } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { RateLimiter } from '../lib/rate-limiter.js';
import { validateBody } from '../lib/validate.js';
import { SendEmailBody } from '../modules/emails/emails.schema.js';
import type { EmailService } from '../modules/emails/emails.service.js';
import { submittedEmail } from '../modules/emails/submitted.js';
import type { Principal } from '../modules/keys/principal.js';
import type { KeyAuthenticator } from '../modules/keys/keys.service.js';
import { isLoopback, listen, readData, smtpError, type Listener, type ListenerOptions } from './listener.js';

export interface SubmissionDeps {
  auth: KeyAuthenticator;
  emails: EmailService;
  /** limits.requests_per_second, per key: a message counts as a request */
  limiter: RateLimiter;
}

/** The API's recipient limit (interface §4.1: 50 per field) for the whole envelope. */
const MAX_RECIPIENTS = 50;

/**
 * SMTP submission (CONTRACT §5): AUTH PLAIN or LOGIN with any user name and
 * an API key holding emails:send as the password; only after STARTTLS when
 * smtp.tls is set, loopback clients excepted. A message takes the same
 * acceptance path as POST /v1/emails (EmailService.send) and is answered 250
 * once it is durably stored; a refusal is the API error as an SMTP reply.
 */
export async function startSubmissionListener(o: ListenerOptions, deps: SubmissionDeps): Promise<Listener> {
  const tlsOn = !!(o.tls.key && o.tls.cert);
  const principals = new WeakMap<SMTPServerSession, Principal>();
  return listen(o, {
    authOptional: false,
    authMethods: ['PLAIN', 'LOGIN'],
    // checked per client below: loopback may authenticate in plain text
    allowInsecureAuth: true,
    onAuth(auth, session, cb) {
      if (tlsOn && !session.secure && !isLoopback(session.remoteAddress)) return cb(smtpError(538, '5.7.11 encryption required: issue STARTTLS first'));
      deps.auth.authenticate(auth.password ?? '').then(
        (p) => {
          if (!p || !(p.key.scopes as readonly string[]).includes('emails:send')) return cb(smtpError(535, '5.7.8 authentication failed: the password must be an API key with the emails:send scope'));
          if (p.project.suspended) return cb(smtpError(535, '5.7.8 this project is suspended'));
          principals.set(session, p);
          cb(null, { user: p.key.id });
        },
        (e: Error) => cb(smtpError(454, `4.7.0 temporary authentication failure (${e.message})`)),
      );
    },
    onRcptTo(_address, session, cb) {
      if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) return cb(smtpError(452, `4.5.3 too many recipients: at most ${MAX_RECIPIENTS} per message`));
      cb();
    },
    onData(stream, session, cb) {
      readData(stream)
        .then(async (raw) => {
          if (!raw) return cb(smtpError(552, `5.3.4 message larger than ${o.maxBytes} bytes`));
          const principal = principals.get(session);
          if (!principal) return cb(smtpError(530, '5.7.0 authentication required'));
          const wait = deps.limiter.take(principal.key.id);
          if (wait !== null) return cb(smtpError(421, `4.7.0 rate limited: retry in ${wait} s`));
          const envelope = { from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address) };
          const { body, idempotencyKey } = await submittedEmail(raw, envelope);
          const sent = await deps.emails.send(principal, validateBody<SendEmailBody>(SendEmailBody, body), newId('request'), idempotencyKey);
          const id = sent.email?.id ?? (sent.replay?.body as { id?: string } | undefined)?.id ?? '';
          cb(null, `2.0.0 queued as ${id}`);
        })
        .catch((e: unknown) => cb(replyOf(e)));
    },
  });
}

/** An API refusal as the SMTP reply that means the same (RFC 3463 codes). */
export function replyOf(e: unknown): Error {
  if (!(e instanceof ApiError)) return smtpError(451, '4.3.0 temporary failure, try again later');
  const text = e.message.replace(/[\r\n]+/g, ' ');
  const code = REPLIES[e.code];
  if (e.code === 'validation_error' && e.field?.startsWith('attachments') && /\bMB\b|bytes|too large|at most/i.test(text)) return smtpError(552, `5.3.4 ${text}`);
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
