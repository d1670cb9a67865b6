/**
 * THE bounce classifier: what a failure says about the address it was for. The MTA asks it about
 * each SMTP reply during delivery (mta/classify-reply.ts), the inbound listener about each
 * recipient of a bounce message (report.ts). Pure: no I/O.
 *
 * A failure gets one reason of the closed set in reasons.ts; only a final failure whose reason says
 * the address is gone is Permanent (reasons.ts `bounceTypeOf`), so a refusal of the sender, its IP,
 * the content or the volume never suppresses a customer's address. The reason is read the way
 * sisimai reads it, text first: a provider's own code, then phrases that name a reason whatever
 * the status says ("552 5.1.1 … over quota" is a full mailbox), then the status, then vaguer
 * phrases, then what the status's subject or the SMTP command suggests.
 */
import { firstMatch, type PhraseRule } from './phrases.js';
import { providerReason } from './providers.js';
import { bounceTypeOf, type BounceReason, type BounceType } from './reasons.js';
import { commandIn, flat, isStatus, replyCode, statusInText, type SmtpCommand } from './smtp-text.js';
import { codeMeaning, statusMeaning, subjectFallback } from './status-reasons.js';
import * as recipient from './words-recipient.js';
import * as sender from './words-sender.js';
import * as system from './words-system.js';

export type { SmtpCommand } from './smtp-text.js';

export interface Bounce {
  bounceType: BounceType;
  reason: BounceReason;
  /** the enhanced status (RFC 3463) the server's reply quotes, else the report's Status, else 5.0.0 / 4.0.0 */
  status: string;
  /** the server's words: the reply or the DSN's Diagnostic-Code (whitespace collapsed, at most 4 KB) */
  diagnostic: string;
}

export interface Failure {
  /** a DSN's Status field, if any */
  status?: string | null | undefined;
  /** the SMTP reply or the diagnostic text */
  diagnostic?: string | null | undefined;
  /** the basic reply code, when the caller has it apart from the text */
  code?: number | null | undefined;
  /** whether the reporter gave up (DSN Action: failed); used when no code tells */
  final?: boolean | undefined;
  /** a report that says the reporter is still trying (DSN Action: delayed, a delay warning) */
  delayed?: boolean | undefined;
  /** the SMTP command the refusal answered, when the report says it apart from the diagnostic */
  command?: SmtpCommand | null | undefined;
}

/**
 * Phrases that name a reason whatever the status says, most telling first: a sending quota before
 * a mailbox's quota, the sender's IP or authentication before "user unknown" (a refusal that names
 * a blocklist is about the sender even when it also says "mailbox unavailable"), the recipient's
 * filter before the directory.
 */
const FIRST: readonly PhraseRule[] = [
  sender.SENDING_QUOTA,
  recipient.MAILBOX_FULL,
  system.SYSTEM_FULL,
  recipient.EXCEED_LIMIT,
  recipient.FILTERED,
  recipient.SUSPENDED,
  recipient.HAS_MOVED,
  sender.NO_RELAYING,
  sender.CONTENT_ERROR,
  sender.SECURITY_ERROR,
  sender.BLOCKED,
  sender.REJECTED,
  recipient.USER_UNKNOWN,
  recipient.NOT_ACCEPT,
  recipient.HOST_UNKNOWN,
  sender.RATE_LIMITED,
  sender.VIRUS_DETECTED,
  sender.SPAM_DETECTED,
];

/** Phrases weighed after a status that names its failure (status-reasons.ts "firm"). */
const LATER: readonly PhraseRule[] = [
  system.MAILER_ERROR,
  system.EXPIRED,
  system.ON_HOLD,
  system.POLICY_VIOLATION,
  system.NETWORK_ERROR,
  system.SYSTEM_ERROR,
  system.SYNTAX_ERROR,
];

interface Reading {
  /** the diagnostic, lower-cased */
  words: string;
  /** the status that explains most: a DSN's generic 5.0.0 yields to the 5.1.1 its diagnostic quotes */
  status: string | null;
  code: number | null;
  command: SmtpCommand | null;
}

/** Classify one failed (or delayed) delivery of one recipient. */
export function classifyBounce(f: Failure): Bounce {
  const diagnostic = flat(f.diagnostic);
  // Amazon SES prefixes the reply with its own guess ("5.1.0 - Unknown address error 550-'…'"): the reply says more
  const said = diagnostic.replace(SES_GUESS, '');
  const reported = f.status && isStatus(f.status.trim()) ? f.status.trim() : null;
  const inText = statusInText(said);
  const code = f.code ?? replyCode(said);
  const telling =
    [reported, inText].find((s) => statusMeaning(s)) ??
    [reported, inText].find((s) => s && !s.endsWith('.0.0')) ??
    reported ??
    inText;
  const cls = telling ? telling[0] : code ? String(code)[0] : f.final === false ? '4' : '5';
  // the remote server's own status, quoted in the diagnostic, says more than the reporter's summary of it
  const status = inText ?? reported ?? (cls === '4' ? '4.0.0' : '5.0.0');
  const read = reasonOf({
    words: said.toLowerCase(),
    status: telling,
    code,
    command: f.command ?? commandIn(said),
  });
  // a report whose sender kept the message and is still trying, or gave up on a temporary failure,
  // let it wait in a queue: that is the one thing it says when nothing else does
  const waited = f.delayed === true || (f.final === true && cls === '4');
  const reason = read === 'undefined' && waited ? 'expired' : read;
  return { bounceType: bounceTypeOf(reason, cls === '5'), reason, status, diagnostic };
}

/**
 * Whether a text names its failure: a status or a code that means one, or words of a reason.
 * "554 Service unavailable" does not: the lines around it may say more.
 */
export function isExplained(text: string): boolean {
  const words = flat(text).toLowerCase();
  return (
    !!statusMeaning(statusInText(words)) ||
    !!providerReason(words) ||
    !!firstMatch(FIRST, words) ||
    !!firstMatch(LATER, words) ||
    !!codeMeaning(replyCode(words))
  );
}

function reasonOf(r: Reading): BounceReason {
  // a provider's documented code means what its documentation says, whenever it is sent
  const documented = r.words ? providerReason(r.words) : null;
  if (documented) return documented;
  const named = r.words ? firstMatch(FIRST, r.words) : null;
  if (named) return inContext(named, r);
  const meaning = statusMeaning(r.status);
  if (meaning?.firm) return meaning.reason;
  const byCode = codeMeaning(r.code);
  if (byCode) return byCode;
  // refused before any address was given: the connecting host was
  if (r.command === 'CONN' || r.command === 'HELO') return 'blocked';
  const later = r.words ? firstMatch(LATER, r.words) : null;
  if (later) return later;
  if (meaning) return inContext(meaning.reason, r);
  // refused at MAIL FROM with nothing more precise said: the sender was refused
  if (r.command === 'MAIL') return 'rejected';
  return subjectFallback(r.status) ?? afterAll(r);
}

/**
 * A reason that names the address, weighed against when the server said it. A server checks the
 * recipient at RCPT TO: a refusal of MAIL FROM is about the sender. "User unknown" is the
 * directory's verdict when it came at RCPT TO (the report names the command, or the reply has
 * Sendmail's RCPT form) or under an addressing status (X.1.1, X.1.3…), and when it is the mail
 * system's own words (Domino's, Exchange's, Gmail's "Address not found"). Said after the message
 * was sent (au and docomo answer so for a refused sender), under a status that says the mailbox
 * exists (X.2.x) or the message was refused (X.7.x), or in a relayed reply that shows neither (a
 * filtering gateway's, McAfee's or SurfControl's, after it took the message), it may be a filter
 * speaking: soft. Hard only when nothing leaves room for that; sisimai draws the same line.
 */
function inContext(reason: BounceReason, r: Reading): BounceReason {
  const addressed = reason === 'user_unknown' || reason === 'host_unknown' || reason === 'has_moved';
  if (!addressed && reason !== 'not_accept' && reason !== 'suspended') return reason;
  if (r.command === 'MAIL') return 'rejected';
  // a local delivery program's complaint ("X-Unix; procmail: … No such user") is about its own setup
  if (r.words.startsWith('x-unix;')) return 'mailer_error';
  if (reason !== 'user_unknown') return reason;
  if (r.command === 'RCPT') return reason;
  const [, subject, detail] = (r.status ?? '').split('.');
  if (subject === '1' && detail !== '0') return reason;
  if (r.command === 'DATA' || subject === '2' || subject === '7') return 'filtered';
  // a relayed reply ("550 …") that shows neither: a gateway may have said it after taking the message
  return RELAYED.test(r.words) && !RCPT_FORM.test(r.words) ? 'filtered' : reason;
}

const SES_GUESS = /^[45]\.\d{1,3}\.\d{1,3} - [A-Za-z ]{3,40}?(?=[245]\d\d[ -])/;

/** A diagnostic that is an SMTP reply relayed from another server: it starts with its code. */
const RELAYED = /^\W{0,3}[245]\d\d\b/;
/**
 * Replies in the form servers give to RCPT TO: Sendmail's "550 5.1.1 <ann@example.com>... User
 * unknown", Postfix's "550 <ann@example.com>: User unknown" and its "Recipient address rejected".
 */
const RCPT_FORM =
  /^\W{0,3}[245]\d\d[ -](?:[245]\.\d{1,3}\.\d{1,3} )?<[^<>\s]{1,255}>(?:\.\.\.|:) |recipient address rejected/;

/** When neither words nor status explain: what the reply code suggests. */
function afterAll(r: Reading): BounceReason {
  // 500–504: the server did not understand a command (RFC 5321 §4.2.3)
  if (r.code && r.code >= 500 && r.code <= 504) return 'syntax_error';
  return 'undefined';
}
