/**
 * Why a delivery failed: the closed set of reasons, each defined here and nowhere else — what it
 * means, whether it is hard (the address is gone: `bounce_type` Permanent, the address suppressed)
 * or soft (this message failed, the address stays), whether a project's soft-bounce policy may
 * suppress it after repeated failures, and replies that mean it (docs/bounces.md prints this table;
 * test/unit/reasons.test.ts reads every example through the classifier).
 *
 * The set follows the reasons of sisimai, the reference bounce parser, so that its verdicts can
 * score ours. A 5xx says "do not retry this message"; it does not say "this address does not
 * exist": only the four reasons that say so are hard.
 */

/** What a failure says about the address (`bounce_type`): gone, still there, or not to be read. */
export type BounceType = 'Permanent' | 'Transient' | 'Undetermined';

export interface ReasonInfo {
  meaning: string;
  /** the address will not take mail: Permanent, suppressed */
  hard: boolean;
  /** a project may suppress the address after N of these in M days (`--soft-bounce-suppression`) */
  repeatable: boolean;
  /** replies (or DSN diagnostics) that mean this reason, as servers write them */
  examples: readonly string[];
}

const hard = (meaning: string, examples: string[]): ReasonInfo => ({
  meaning,
  hard: true,
  repeatable: false,
  examples,
});
const soft = (meaning: string, examples: string[], repeatable = false): ReasonInfo => ({
  meaning,
  hard: false,
  repeatable,
  examples,
});

export const REASONS = {
  user_unknown: hard('the mailbox does not exist at the recipient domain', [
    '550 5.1.1 <ann@example.com>: Recipient address rejected: User unknown in virtual mailbox table',
    "550-5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's email address",
    '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup',
    "554 delivery error: dd This user doesn't have a yahoo.com account (ann@yahoo.com) [0]",
  ]),
  host_unknown: hard('the recipient domain does not exist or has no mail server', [
    '550 5.1.2 Host unknown (Name server: example.invalid: host not found)',
    'Host or domain name not found. Name service error for name=example.invalid type=A: Host not found',
    "511 sorry, can't find a valid MX for rcpt domain (#5.1.1 - chkuser)",
  ]),
  has_moved: hard('the mailbox has moved and the server gives no forwarding', [
    '551 5.1.6 User has moved; please try <ann@example.org>',
    '550 5.1.6 recipient no longer on server: ann@icloud.com',
  ]),
  not_accept: hard('the recipient domain accepts no mail at all (a null MX, RFC 7505, or no MX and no address)', [
    '556 5.1.10 Recipient address has null MX',
    'an MX or SRV record indicated no SMTP service',
    "Sorry, I couldn't find a mail exchanger or IP address. (#5.4.4)",
  ]),
  mailbox_full: soft(
    "the recipient's mailbox is full",
    [
      '452 4.2.2 The email account that you tried to reach is over quota',
      '552 5.2.2 Mailbox full',
      '552 5.2.2 <ann@icloud.com>: user is over quota',
      '552 5.1.1 Boite du destinataire pleine. Recipient overquota. OFR_417 [417]',
    ],
    true,
  ),
  exceed_limit: soft('the message is bigger than the recipient server or mailbox takes', [
    '552 5.3.4 Message size exceeds fixed maximum message size',
    '552 5.2.3 Message exceeds maximum fixed size',
    "552 5.3.4 Your message exceeded Google's message size limits.",
  ]),
  filtered: soft("the recipient's own filter or settings refused this sender or message", [
    '550 5.2.1 The email account that you tried to reach is disabled by user filter',
    '550 5.7.1 Delivery not authorized, message refused by recipient rules',
    '550 5.1.1 RCP-P2 http://postmaster.facebook.com/response_codes?ip=192.0.2.1#rcp Refused due to recipient preferences',
    '550 : User unknown',
  ]),
  blocked: soft(
    "the recipient's server refused the sending IP address, host or domain (a blocklist, its reputation, no reverse DNS)",
    [
      '554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org',
      '550 5.7.1 [192.0.2.1] The IP address sending this message does not have a PTR record setup',
      '550 5.7.606 Access denied, banned sending IP [192.0.2.1]',
      '421 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily deferred due to unexpected volume or user complaints',
    ],
  ),
  spam_detected: soft('the message was refused as spam', [
    '550 5.7.1 Our system has detected that this message is likely unsolicited mail',
    '554 5.7.1 Message rejected as spam by Content Filtering',
  ]),
  virus_detected: soft('the message was refused because it carries a virus or malware', [
    '554 5.7.1 The message was rejected because it contains prohibited virus or spam content',
    '554 5.7.0 Reject, id=12345-01 - INFECTED: Eicar-Test-Signature',
  ]),
  policy_violation: soft("the message broke a policy of the recipient's server or organisation", [
    '550 5.7.1 Message rejected due to local policy',
    "554 5.7.1 This message has been blocked because it violates the organisation's policy",
    '554 5.7.9 Message not accepted for policy reasons. See https://postmaster.yahooinc.com/error-codes',
  ]),
  security_error: soft('authentication failed or was missing: SPF, DKIM, DMARC, or TLS that was required', [
    '550 5.7.26 This message does not pass authentication checks (SPF and DKIM both do not pass)',
    '530 5.7.0 Must issue a STARTTLS command first',
    '550 5.7.509 Access denied, sending domain example.com does not pass DMARC verification',
  ]),
  rejected: soft("the sender's address (the envelope from) was refused", [
    '553 5.1.8 <bounce@example.com>: Sender address rejected: Domain not found',
    '550 5.1.0 Sender rejected',
    '550-Verification failed for <bounce@example.com> 550-Unrouteable address 550 Sender verify failed',
  ]),
  suspended: soft(
    'the mailbox exists but is disabled, suspended or inactive',
    [
      '550 5.2.1 The email account that you tried to reach is disabled',
      '554 5.7.1 Account ann@example.com is suspended',
      '554 delivery error: dd Sorry your message to ann@yahoo.com cannot be delivered. This account has been disabled or discontinued',
    ],
    true,
  ),
  expired: soft('the message stayed in a queue until its delivery time ran out', [
    '4.4.7 Delivery time expired: message could not be delivered within 5 days',
    'retry time not reached for any host after a long failure period',
    '554 4.4.7 Message expired: unable to deliver in 840 minutes.<421 4.4.2 Connection timed out>',
  ]),
  rate_limited: soft('the recipient server refused because mail came too fast or too much (also called too_fast)', [
    '421 4.7.28 Our system has detected an unusual rate of unsolicited mail originating from your IP address',
    '452 4.5.3 Too many recipients',
    '450 4.2.1 The user you are trying to contact is receiving mail too quickly. Please resend your message at a later time.',
  ]),
  no_relaying: soft('the server is not the recipient domain’s and refused to relay', [
    '554 5.7.1 <ann@example.com>: Relay access denied',
    "553 sorry, that domain isn't in my list of allowed rcpthosts (#5.7.1)",
  ]),
  content_error: soft('the message’s headers or format were refused (not RFC 5322, a bad header)', [
    '550 5.6.0 Message headers are not RFC 5322 compliant',
    '550 5.7.1 Messages missing a valid Message-ID: header are not accepted.',
  ]),
  syntax_error: soft('the server refused an SMTP command as malformed', [
    '501 5.5.2 Syntax error in parameters',
    '503 5.5.1 Bad sequence of commands',
  ]),
  mailer_error: soft('the program that delivers on the recipient’s host failed', [
    'mail.local: unknown mailer error 1',
    'X-Unix; 255',
  ]),
  network_error: soft('the recipient server could not be reached or the connection broke', [
    'connect to mx.example.net[192.0.2.1]:25: No route to host',
    '5.4.6 Routing loop detected',
    '554 5.4.6 Hop count exceeded - possible mail loop',
  ]),
  system_error: soft('the recipient server failed (a temporary or internal error)', [
    '451 4.3.0 Temporary local problem, please try again',
    '451 4.3.0 Error: queue file write error',
  ]),
  system_full: soft("the recipient server's disk or storage is full", [
    '452 4.3.1 Insufficient system storage',
    '452 4.3.1 Insufficient system resources',
  ]),
  on_hold: soft('the reporter kept the message back without a decision (moderation, a review queue)', [
    '4.0.0 delivery on hold',
    '451 Account outbounds disabled',
  ]),
  undefined: soft('nothing in the failure says why', [
    '550 Requested action not taken',
    '554 5.0.0 Service unavailable',
  ]),
} as const satisfies Record<string, ReasonInfo>;

export type BounceReason = keyof typeof REASONS;
export const BOUNCE_REASONS = Object.keys(REASONS) as BounceReason[];

/** A stored or received string's reason, if it names one of the table (rows and events keep the name as text). */
export function reasonInfo(name: unknown): ReasonInfo | null {
  return typeof name === 'string' && Object.hasOwn(REASONS, name) ? REASONS[name as BounceReason] : null;
}

export function isHard(reason: BounceReason): boolean {
  return REASONS[reason].hard;
}

/**
 * The bounce_type a failure gets: Permanent only for a final failure whose reason is hard,
 * Undetermined for a final failure nothing explains, Transient for the rest (a temporary failure,
 * or a final one the address is not to blame for).
 */
export function bounceTypeOf(reason: BounceReason, final: boolean): BounceType {
  if (final && isHard(reason)) return 'Permanent';
  if (final && reason === 'undefined') return 'Undetermined';
  return 'Transient';
}
