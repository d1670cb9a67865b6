import { classifyBounce, isExplained } from './classify-bounce.js';
import type { ReportRecipient } from './dsn.js';

/**
 * Bounces without a delivery-status part: the text the mail system wrote
 * (qmail, Exim, Sendmail, Notes, Exchange, Yahoo, Gmail and the rest). Each
 * failed address is followed by the server's words about it; the copy of
 * the returned message, which a few of them append, is cut off first, so
 * that its own addresses and words are not read as the failure's. Pure.
 */

/** Where the returned message's copy (or its headers) begins in the text of common bounce formats. */
const COPY_STARTS = [
  /^[ \t]*-{2,}[ \t]*(?:Below this line is a copy of the message|This is a copy of the message|Original message|Original Message Headers|The (?:original )?(?:message|header|headers) (?:of the original message )?(?:is|are|was) (?:following|attached|included)|Returned message|Unsent message below|Message header follows|Original message header)/im,
  /^[ \t]*-{3,}[ \t]*(?:Forwarded|Original|Returned) message/im,
  /^[ \t]*(?:Original message headers|Below this line is a copy of the message|The original message was received at|------ This is a copy of the message|-----Original Message-----|Message header follows|Original message follows|The text you sent follows)/im,
  /^[ \t]*Return-Path:[ \t]*</im,
  /^[ \t]*Received:[ \t]+from\b/im,
];

const TEMPORARY =
  /\b(?:delayed|delay(?:ed)? notification|will (?:continue|keep) (?:trying|to try)|will (?:be )?retr(?:y|ied)|has not (?:yet )?been delivered|still trying|warning: message|temporarily|not yet been delivered|no need to resend)\b/i;
const ADDRESS = /<?\b([A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,})\b>?/g;

export interface PlainBounceContext {
  /** addresses that are not recipients: the bounce's own From and To (the return path) */
  ignore: string[];
  /** the returned message's To, when the text names nobody */
  originalTo: string[];
}

export function readPlainBounce(text: string, ctx: PlainBounceContext): ReportRecipient[] {
  const body = cutCopy(text.replace(/\r\n/g, '\n'));
  const ignore = new Set(ctx.ignore.map((a) => a.toLowerCase()));
  const hits: Array<{ address: string; at: number; end: number }> = [];
  const contacts = new Set<string>();
  for (const m of body.matchAll(ADDRESS)) {
    const address = m[1].toLowerCase();
    if (ignore.has(address) || /^(?:mailer-daemon|mail-daemon)@/i.test(address)) continue;
    if (isContact(body, m.index, m.index + m[0].length)) contacts.add(address);
    // a Message-ID quoted in the text looks like an address: <id@host> after "Message-ID" or a mail system's own ids
    if (/message-?id:?\s*<?$/i.test(body.slice(Math.max(0, m.index - 14), m.index))) continue;
    if (/(?:https?:\/\/|www\.)\S*$/i.test(body.slice(Math.max(0, m.index - 80), m.index))) continue;
    hits.push({ address, at: m.index, end: m.index + m[0].length });
  }
  // a text that quotes the envelope ("RCPT TO: x@y") names the recipient; other addresses are the message's From or Cc
  const envelope = new Set(
    [...body.matchAll(/\bRCPT TO:[ \t]*<?([^\s<>]+@[^\s<>]+?)>?(?=\s|$)/gi)].map((m) => m[1].toLowerCase()),
  );
  // after "did not reach the following recipient(s):" come the failures; what precedes is the message's summary
  const list = LIST_STARTS.exec(body);
  const listed = list ? hits.filter((h) => h.at > list.index) : [];
  const all = [...new Set((listed.length ? listed : hits).map((h) => h.address))].filter((a) => !contacts.has(a));
  const named = all.filter((a) => envelope.has(a));
  const addresses = named.length ? named : all;
  const temporary =
    TEMPORARY.test(body.slice(0, 2000)) &&
    !/permanent|fatal|failed permanently|could not be delivered/i.test(body.slice(0, 2000));
  if (!addresses.length) {
    const to = ctx.originalTo.filter((a) => !ignore.has(a.toLowerCase()));
    return to.length ? [verdict(to[0].toLowerCase(), body, temporary)] : [];
  }
  return addresses.map((address) => {
    // the words about one address: from its first mention to the next address's
    const first = hits.find((h) => h.address === address)!;
    const next = hits.find((h) => h.at > first.at && h.address !== address);
    const own = body.slice(first.end, next ? next.at : undefined);
    // formats that name the address first and give the reason in a later block (Sendmail's transcript, Gmail's details)
    const words = hasReason(own) ? own : body;
    return verdict(address, words, temporary);
  });
}

/** Where a bounce text starts listing the addresses that failed. */
const LIST_STARTS =
  /did not reach the following recipient|following (?:recipients?|address(?:es)?|destinations?)(?:\(e?s\))? (?:had|has|have|could not|failed|were|was)|(?:could not|cannot|can't|unable to) be delivered to(?: the following)?:|delivery to the following (?:recipients?|address(?:es)?) (?:failed|has failed)/i;

/** An address the text gives to write to ("please contact <support@…>"), not one that failed. */
function isContact(body: string, at: number, end: number): boolean {
  const before = body.slice(body.lastIndexOf('\n', at - 1) + 1, at);
  const after = body.slice(end, end + 30);
  return (
    /\b(?:contact|write to|e-?mail us|questions?|assistance|help ?desk|reach us|send (?:an? )?(?:e-?)?mail to)\b/i.test(
      before,
    ) || /^[\s>]*(?:へ|に|まで)?\s*(?:ご連絡|お問い?合わせ)/.test(after)
  );
}

/** Reasons that blame the recipient's address: a refusal of the sender (at MAIL FROM) cannot mean them. */
const ADDRESS_REASONS = new Set(['user_unknown', 'host_unknown', 'mailbox_disabled', 'address_moved', 'other']);

function verdict(address: string, words: string, temporary: boolean): ReportRecipient {
  const diagnostic = diagnosticOf(words);
  const replied = classifyBounce({ diagnostic, final: !temporary });
  // a reply that says nothing ("554 Service unavailable") leaves the reason to the lines around it (Sendmail's "mail.local: unknown user")
  const around = isExplained(diagnostic)
    ? replied
    : classifyBounce({ diagnostic: shortened(words), final: !temporary });
  const b = around.reason === 'other' ? replied : around;
  // "SMTP error … after MAIL FROM:<…>" (Exim), "(in reply to MAIL FROM command)" (Postfix): the server refused the sender
  const atMailFrom = /\bafter MAIL FROM\b|in reply to MAIL FROM\b/i.test(words) && ADDRESS_REASONS.has(b.reason);
  const reason = atMailFrom ? 'policy' : b.reason;
  const bounceType = atMailFrom ? 'Transient' : b.bounceType;
  return {
    address,
    action: temporary ? 'delayed' : 'failed',
    status: b.status,
    bounceType,
    reason,
    diagnostic: b.diagnostic || null,
  };
}

function shortened(words: string): string {
  const flat = words.replace(/\s+/g, ' ').trim();
  return flat.length > 500 ? `${flat.slice(0, 500)}…` : flat;
}

function cutCopy(text: string): string {
  let end = text.length;
  for (const re of COPY_STARTS) {
    const m = re.exec(text);
    // a cut in the first lines would leave no failure to read: such a "copy" is the report's own header block
    if (m && m.index > 40 && m.index < end) end = m.index;
  }
  return text.slice(0, end);
}

function hasReason(text: string): boolean {
  return /\b[245]\d\d\b|\b[245]\.\d{1,3}\.\d{1,3}\b|unknown|not exist|no such|not found|full|quota|disabled|rejected|refused|denied|blocked|spam|too (?:large|big)|invalid|unavailable|expired|timed? ?out|listed/i.test(
    text,
  );
}

/**
 * The sentence that carries the failure: an SMTP reply if one is quoted
 * (with what follows it on its line), else the text itself, shortened.
 */
function diagnosticOf(words: string): string {
  const reply = /(?:^|[\s:;([#<])([245]\d\d[ -](?:#?[245]\.\d{1,3}\.\d{1,3}\b)?[^\n]{0,400})/.exec(
    words.replace(/\s+/g, ' ').trim(),
  );
  return reply ? shortened(reply[1]) : shortened(words);
}
