/**
 * The pieces of an SMTP reply or a bounce's text the classifier weighs besides its words: the
 * enhanced status (RFC 3463), the basic reply code (RFC 5321), and the command the server was
 * answering. Pure. Every scan is over a capped text with patterns that cannot backtrack far: a
 * bounce is written by a stranger and may be megabytes of hostile text.
 */

/** The most of a diagnostic any pattern reads: a reply, even Gmail's many-line ones, is under 2 KB. */
export const SCAN_LIMIT = 4096;

export type SmtpCommand = 'CONN' | 'HELO' | 'MAIL' | 'RCPT' | 'DATA';

const STATUS = /^[245]\.\d{1,3}\.\d{1,3}$/;
// a failure's enhanced status inside text: not a piece of an IP address or a version number, and not
// a 2.x.x success a transcript quotes on the way ("250 2.1.5 Ok")
const STATUS_IN_TEXT = /(?<![\d.])#?([45])\.(\d{1,3})\.(\d{1,3})(?![\d]|\.\d)/;
const REPLY_CODE = /(?:^|[\s;:([#<])([245][0-5]\d)(?:[ -]|$)/;

/**
 * A text as the patterns read it (the classifier lower-cases it too): one line, straight quotes
 * (Gmail writes "doesn’t"), at most SCAN_LIMIT characters.
 */
export function flat(text: string | null | undefined): string {
  return (text ?? '')
    .slice(0, SCAN_LIMIT * 2)
    .replace(/\s+/g, ' ')
    .replace(/[\u2018\u2019]/g, "'")
    .trim()
    .slice(0, SCAN_LIMIT);
}

export function isStatus(value: string): boolean {
  return STATUS.test(value);
}

export function statusInText(text: string): string | null {
  const m = STATUS_IN_TEXT.exec(text);
  return m ? `${m[1]}.${m[2]}.${m[3]}` : null;
}

export function replyCode(text: string): number | null {
  const m = REPLY_CODE.exec(text);
  return m ? Number(m[1]) : null;
}

/**
 * The command a refusal answered, as mail systems say it: Postfix "(in reply to end of DATA
 * command)", Exim "SMTP error from remote mail server after RCPT TO:<…>", Sendmail's and qmail's
 * transcripts (">>> DATA" then "<<< 550 …"). The command matters: a server checks the recipient at
 * RCPT TO, so "user unknown" after the message was sent is a filter's word, not the directory's.
 */
export function commandIn(raw: string): SmtpCommand | null {
  const text = flat(raw);
  const said = SAID.exec(text);
  // Postfix's "refused to talk to me": the server's greeting was the refusal
  if (said) return said[2] ? 'CONN' : commandNamed((said[1] ?? said[3] ?? said[4] ?? said[5]).replace('_', ' '));
  return transcriptCommand(text);
}

const SAID =
  /\b(?:in reply to|after|while sending|rejected (?:at|after|during)|failed (?:at|after)) (?:the )?(end of data|data|rcpt to|rcpt|mail from|mail|ehlo|helo|initial connection|connect|greeting|starttls)\b|\b(refused to talk to me)\b|\bsmtp command:? ?(data|rcpt to|rcpt|mail from|ehlo|helo)\b|\b(?:for|to) (rcpt to|mail from|data) (?:response|command)\b|\[(rcpt_to|mail_from|data)\]/i;

function commandNamed(name: string): SmtpCommand {
  const n = name.toLowerCase();
  if (n.includes('data')) return 'DATA';
  if (n.startsWith('rcpt')) return 'RCPT';
  if (n.startsWith('mail')) return 'MAIL';
  if (n === 'ehlo' || n === 'helo' || n === 'starttls') return 'HELO';
  return 'CONN';
}

// ">>> RCPT To:<a@b>" … "<<< 550 …": the last command sent before the first refusal
const TRANSCRIPT = /(?:>>>|→)\s?(data|rcpt to|mail from|ehlo|helo)\b|<<<\s?([45]\d\d)\b/gi;

function transcriptCommand(text: string): SmtpCommand | null {
  let last: SmtpCommand | null = null;
  TRANSCRIPT.lastIndex = 0;
  for (let m = TRANSCRIPT.exec(text); m; m = TRANSCRIPT.exec(text)) {
    if (m[1]) last = commandNamed(m[1]);
    else if (last) return last;
  }
  return null;
}
