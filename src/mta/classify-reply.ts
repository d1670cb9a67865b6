import { classifyBounce, type Bounce, type SmtpCommand } from '../modules/receiving/bounces/classify-bounce.js';

export type SmtpOutcomeKind = 'delivered' | 'deferred' | 'bounced' | 'ambiguous';

export interface Classified {
  kind: SmtpOutcomeKind;
  /** a refusal's meaning (modules/receiving/bounces/classify-bounce.ts): set for bounced and deferred replies */
  bounce?: Bounce;
  reply: string;
}

/**
 * The meaning of an SMTP reply (RFC 5321 §4.2.1): 2yz accepted, 4yz try
 * again later, 5yz do not. An enhanced status code (RFC 3463) wins over the
 * basic code when they disagree on the class: a "550 4.2.2 mailbox full"
 * is a temporary condition in all but its first digit. What a refusal says
 * about the address is the bounce classifier's, the same one that reads
 * bounce messages that come back later.
 *
 * `command` is the command the reply answered, when the caller knows it: a
 * "550 No such user" to RCPT TO is the directory's verdict (Permanent), the
 * same words after DATA are a filter's (au, docomo answer so), and without
 * the command or an addressing status (5.1.1) the classifier stays soft.
 * nodemailer's names (`RCPT TO`, `MAIL FROM`, `DATA`) are taken; others count as unknown.
 */
export function classifyReply(code: number, text: string, command?: string): Classified {
  const reply = text.trim() || String(code);
  const enhanced = /^\d{3}[ -]([245])\.\d{1,3}\.\d{1,3}\b/.exec(reply)?.[1];
  const cls = enhanced ? Number(enhanced) : Math.floor(code / 100);
  const said = commandOf(command);
  if (cls === 2 && code >= 200 && code < 300) return { kind: 'delivered', reply };
  if (cls === 4 || (code >= 400 && code < 500))
    return {
      kind: 'deferred',
      bounce: classifyBounce({ code, diagnostic: reply, final: false, command: said }),
      reply,
    };
  if (code >= 500 && code < 600)
    return { kind: 'bounced', bounce: classifyBounce({ code, diagnostic: reply, final: true, command: said }), reply };
  return { kind: 'deferred', reply: `unexpected reply: ${reply}` };
}

/** Nodemailer names commands as sent ("RCPT TO", "MAIL FROM"); the classifier by their verb. */
function commandOf(command: string | undefined): SmtpCommand | null {
  if (command === 'RCPT TO') return 'RCPT';
  if (command === 'MAIL FROM') return 'MAIL';
  return command === 'CONN' || command === 'HELO' || command === 'MAIL' || command === 'RCPT' || command === 'DATA'
    ? command
    : null;
}

/**
 * A failure without a reply. Until the whole body was handed over, the
 * server cannot have taken the message (it never saw the final "."), so it
 * is tried again later; after that only the server knows whether it took
 * it: ambiguous, never sent again by itself (interface §1.9).
 */
export function classifyNoReply(description: string, bodyEnded: boolean): Classified {
  return bodyEnded
    ? {
        kind: 'ambiguous',
        reply: `no answer after the message was transmitted (${description}); not sent again unless an operator retries it`,
      }
    : { kind: 'deferred', reply: `421 4.4.2 ${description}` };
}
