import { classifyBounce, isExplained } from './classify-bounce.js';
import type { ReportRecipient } from './dsn.js';
import { commandIn } from './smtp-text.js';

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
  /^[ \t]*-{3,}[ \t]*original mail info/im, // m-FILTER
  /^[ \t]*Return-Path:[ \t]*</im,
  /^[ \t]*Received:[ \t]+from\b/im,
];

const TEMPORARY =
  /\b(?:delayed|delay(?:ed)? notification|will (?:continue|keep) (?:trying|to try)|will (?:be )?retr(?:y|ied)|has not (?:yet )?been delivered|still trying|warning: message|temporarily|not yet been delivered|no need to resend)\b/i;
// bounded parts (RFC 5321 lengths): a run of dots or letters in a hostile text cannot make a scan quadratic
const ADDRESS = /<?\b([A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.){1,10}[A-Za-z]{2,24})\b>?/g;
/** The most of a notice read for addresses and words: a bounce's own text is a few KB; the rest is a copy or noise. */
const NOTICE_LIMIT = 256 * 1024;
/** The most addresses taken from one notice. */
const MAX_ADDRESSES = 2000;

export interface PlainBounceContext {
  /** addresses that are not recipients: the bounce's own From and To (the return path) */
  ignore: string[];
  /** the returned message's To, when the text names nobody */
  originalTo: string[];
}

export function readPlainBounce(text: string, ctx: PlainBounceContext): ReportRecipient[] {
  const body = cutCopy(text.slice(0, NOTICE_LIMIT).replace(/\r\n/g, '\n'));
  const lower = body.toLowerCase();
  const ignore = new Set(ctx.ignore.map((a) => a.toLowerCase()));
  const hits: Array<{ address: string; at: number; end: number }> = [];
  const contacts = new Set<string>();
  for (const m of body.matchAll(ADDRESS)) {
    if (hits.length >= MAX_ADDRESSES) break;
    const address = m[1].toLowerCase();
    if (ignore.has(address) || /^(?:mailer-daemon|mail-daemon)@/i.test(address)) continue;
    if (isContact(body, m.index, m.index + m[0].length)) contacts.add(address);
    // a Message-ID quoted in the text looks like an address: <id@host> after "Message-ID" or a mail system's own ids
    if (/message-?id:?\s*<?$/i.test(body.slice(Math.max(0, m.index - 14), m.index))) continue;
    if (/(?:https?:\/\/|www\.)\S*$/i.test(body.slice(Math.max(0, m.index - 80), m.index))) continue;
    hits.push({ address, at: m.index, end: m.index + m[0].length });
  }
  // a text that quotes the envelope ("RCPT TO: x@y") or Sendmail's verdict lines ("550 <x@y>... User unknown")
  // names the recipients; other addresses are the message's From or Cc
  const envelope = new Set([...body.matchAll(ENVELOPE)].map((m) => (m[1] ?? m[2]).toLowerCase()));
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
    // qmail's "<a@b>:" line names the failed address even when it is the report's own To (mail to oneself)
    const own = /^[ \t]*<?([^\s<>@]{1,64}@[^\s<>:]{1,255})>?:[ \t]*$/m.exec(body)?.[1];
    const to = own ? [own] : ctx.originalTo.filter((a) => !ignore.has(a.toLowerCase()));
    return to.length ? [verdict(to[0].toLowerCase(), body, temporary)] : [];
  }
  return addresses.map((address) => {
    // the words about one address: from its first mention to the next address's
    const first = hits.find((h) => h.address === address)!;
    const next = hits.find((h) => h.at > first.at && h.address !== address);
    // Sendmail's "554 <a@b>... Host unknown": the verdict is that line's own
    const line = verdictLine(body, lower, address);
    const own = line ?? body.slice(first.end, next ? next.at : undefined);
    // formats that name the address first and give the reason in a later block (Sendmail's transcript, Gmail's details)
    const words = hasReason(own) || isExplained(own) ? own : body;
    return verdict(address, words, temporary);
  });
}

const ENVELOPE =
  /\bRCPT TO:[ \t]*<?([^\s<>@]{1,64}@[^\s<>]{1,255}?)>?(?=\s|$)|^[ \t]*[245]\d\d <([^\s<>]{1,64}@[^\s<>]{1,255})>\.\.\. /gim;

/** The rest of Sendmail's verdict line about an address ("550 <a@b>... User unknown"), if there is one. */
function verdictLine(body: string, lower: string, address: string): string | null {
  const at = lower.indexOf(`<${address}>... `);
  if (at < 0) return null;
  const start = body.lastIndexOf('\n', at) + 1;
  if (!/^[ \t]*[245]\d\d $/.test(body.slice(start, at))) return null;
  const end = body.indexOf('\n', at);
  const line = body.slice(start, end < 0 ? undefined : end);
  if (isExplained(line)) return line;
  // "554 <a@b>... Remote protocol error" says only that it failed: the exchange just above says why
  const above = body
    .slice(Math.max(0, start - 600), start)
    .split('\n')
    .slice(0, -1);
  const exchange: string[] = [];
  for (const l of above.reverse()) {
    if (!/^[ \t]*(?:<<<|>>>|[245]\d\d )/.test(l) || /<[^<>\s]+>\.\.\. /.test(l) || exchange.length >= 4) break;
    exchange.unshift(l);
  }
  const block = [...exchange, line].join('\n');
  return exchange.length && isExplained(block) ? block : null;
}

/** Where a bounce text starts listing the addresses that failed. */
const LIST_STARTS =
  /did not reach the following recipient|following (?:recipients?|address(?:es)?|destinations?)(?:\(e?s\))? (?:had|has|have|could not|failed|were|was)|(?:could not|cannot|can't|unable to) be delivered to(?: the following)?:|delivery to the following (?:recipients?|address(?:es)?) (?:failed|has failed)/i;

/** An address the text gives to write to ("please contact <support@…>"), not one that failed. */
function isContact(body: string, at: number, end: number): boolean {
  const line = body.slice(Math.max(0, at - 200), at);
  const before = line.slice(line.lastIndexOf('\n') + 1);
  const after = body.slice(end, end + 30);
  return (
    /\b(?:contact|write to|e-?mail us|questions?|assistance|help ?desk|reach us|send (?:an? )?(?:e-?)?mail to)\b/i.test(
      before,
    ) || /^[\s>]*(?:へ|に|まで)?\s*(?:ご連絡|お問い?合わせ)/.test(after)
  );
}

function verdict(address: string, all: string, temporary: boolean): ReportRecipient {
  const words = all.slice(0, 8000);
  const diagnostic = diagnosticOf(words);
  // "SMTP error … after MAIL FROM:<…>" (Exim), "(in reply to end of DATA command)" (Postfix): the command refused
  const command = commandIn(words.slice(0, 4000));
  const failure = { final: !temporary, delayed: temporary, command };
  const replied = classifyBounce({ ...failure, diagnostic });
  // a reply that says nothing ("554 Service unavailable") leaves the reason to the lines around it (Sendmail's "mail.local: unknown user")
  const around = isExplained(diagnostic) ? replied : classifyBounce({ ...failure, diagnostic: shortened(words) });
  const b = around.reason === 'undefined' ? replied : around;
  return {
    address,
    action: temporary ? 'delayed' : 'failed',
    status: b.status,
    bounceType: b.bounceType,
    reason: b.reason,
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
  const text = words.slice(0, 8000).replace(/\s+/g, ' ').trim();
  // a reply with an enhanced status says most ("Remote Server returned '550 5.1.10 …'"), then any reply
  const reply = WITH_STATUS.exec(text) ?? REPLY.exec(text);
  return reply ? shortened(reply[1]) : shortened(words);
}

const WITH_STATUS = /(?:^|[\s:;([#<'"])([245]\d\d[ -]#?[245]\.\d{1,3}\.\d{1,3}\b.{0,400})/;
const REPLY = /(?:^|[\s:;([#<'"])([245]\d\d[ -].{0,400})/;
