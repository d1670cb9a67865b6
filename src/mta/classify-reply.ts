import { classifyBounce, type Bounce } from '../modules/receiving/bounces/classify-bounce.js';

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
 */
export function classifyReply(code: number, text: string): Classified {
  const reply = text.trim() || String(code);
  const enhanced = /^\d{3}[ -]([245])\.\d{1,3}\.\d{1,3}\b/.exec(reply)?.[1];
  const cls = enhanced ? Number(enhanced) : Math.floor(code / 100);
  if (cls === 2 && code >= 200 && code < 300) return { kind: 'delivered', reply };
  if (cls === 4 || (code >= 400 && code < 500))
    return { kind: 'deferred', bounce: classifyBounce({ code, diagnostic: reply, final: false }), reply };
  if (code >= 500 && code < 600)
    return { kind: 'bounced', bounce: classifyBounce({ code, diagnostic: reply, final: true }), reply };
  return { kind: 'deferred', reply: `unexpected reply: ${reply}` };
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
