import type { BounceReason } from './reasons.js';

/**
 * What an enhanced status code (RFC 3463 and the IANA registry of later ones) says by itself.
 * Pure. Keys are "subject.detail", for either class: 4.2.2 and 5.2.2 both mean a full mailbox.
 *
 * A status is "firm" when it names its failure well enough that no later, vaguer word outweighs
 * it (5.2.2 full, 5.3.4 too big); a "soft" one names a likely reason the words may correct
 * (5.1.1 user unknown yields to "local policy violation", as 5.7.1 yields to anything). Words that
 * name a reason outright (classify-bounce.ts FIRST, from the words-*.ts tables) outweigh every status: servers write
 * "552 5.1.1 … overquota" and "550 5.1.1 … disabled by user filter".
 */
interface StatusMeaning {
  reason: BounceReason;
  firm: boolean;
}

const firm = (reason: BounceReason): StatusMeaning => ({ reason, firm: true });
const likely = (reason: BounceReason): StatusMeaning => ({ reason, firm: false });

const MEANINGS: Record<string, StatusMeaning> = {
  // X.1: addressing. X.1.0 ("other address status") names no side: the words decide.
  '1.1': likely('user_unknown'),
  '1.2': likely('host_unknown'),
  '1.3': likely('user_unknown'), // bad destination mailbox address syntax: that address cannot work
  '1.4': firm('filtered'), // ambiguous: the server will not pick one
  '1.6': firm('has_moved'),
  '1.7': firm('rejected'), // the sender's address, not the recipient's
  '1.8': firm('rejected'),
  '1.9': likely('system_error'),
  '1.10': likely('not_accept'), // RFC 7505 null MX (Microsoft also uses it for "recipient not found")
  // X.2: the mailbox exists; something about it refused the message
  '2.0': likely('filtered'),
  '2.1': likely('suspended'),
  '2.2': firm('mailbox_full'),
  '2.3': firm('exceed_limit'),
  '2.4': likely('filtered'), // mailing list expansion
  // X.3: the destination system
  '3.0': likely('system_error'),
  '3.1': firm('system_full'),
  '3.2': likely('system_error'), // "not accepting network messages": shutdown, load, maintenance
  '3.3': likely('system_error'),
  '3.4': firm('exceed_limit'),
  '3.5': likely('system_error'),
  // X.4: network and routing
  '4.0': likely('network_error'),
  '4.1': likely('network_error'), // no answer from host
  '4.2': likely('network_error'),
  '4.3': likely('system_error'),
  '4.4': likely('host_unknown'), // unable to route: no usable DNS answer for the domain
  '4.5': likely('system_error'), // congestion
  '4.6': likely('network_error'), // routing loop
  '4.7': firm('expired'),
  '4.8': likely('network_error'),
  // X.5: protocol
  '5.1': likely('syntax_error'),
  '5.2': likely('syntax_error'),
  '5.3': firm('rate_limited'), // too many recipients
  '5.4': likely('syntax_error'),
  '5.5': likely('syntax_error'),
  '5.6': likely('syntax_error'),
  // X.7: security and policy. X.7.1 ("delivery not authorized") says only "refused".
  '7.0': likely('security_error'),
  '7.13': firm('suspended'), // user account disabled (RFC 7504's 525)
  '7.16': firm('exceed_limit'),
  '7.17': firm('has_moved'), // RFC 7293: the mailbox's owner has changed
  '7.18': firm('has_moved'),
  '7.25': firm('blocked'), // reverse DNS validation failed
  '7.27': firm('rejected'), // RFC 7505: the sender's domain has a null MX
  '7.28': likely('spam_detected'), // a flood of similar abusive messages
};

// RFC 7372 and others: SPF, DKIM, DMARC, ARC, REQUIRETLS and the cryptographic codes. Likely only:
// servers put "5.7.9 Header error" or "5.7.7 policy violation" under them
for (const detail of [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 19, 20, 21, 22, 23, 24, 26, 29, 30])
  MEANINGS[`7.${detail}`] ??= likely('security_error');

/** The meaning of a status, or null for the ones that name no reason (X.0.0, X.1.0, X.5.0, X.7.1, …). */
export function statusMeaning(status: string | null): StatusMeaning | null {
  if (!status) return null;
  const [, subject, detail] = status.split('.');
  const key = `${subject}.${detail}`;
  if (key in MEANINGS) return MEANINGS[key];
  // Microsoft's own details (5.7.5xx–7xx, 5.4.3xx) and any other unregistered one: the subject tells
  if (subject === '6') return likely('content_error');
  return null;
}

/** What a status's subject alone suggests when nothing else explains a failure. */
export function subjectFallback(status: string | null): BounceReason | null {
  if (!status) return null;
  const [cls, subject, detail] = status.split('.');
  if (subject === '7') return cls === '4' && detail === '1' ? 'blocked' : 'security_error';
  if (subject === '6') return 'content_error';
  if (subject === '3') return 'system_error';
  if (subject === '4') return 'network_error';
  if (subject === '2') return 'filtered';
  return null;
}

/**
 * Reply codes that carry a meaning of their own (RFC 7504, RFC 3207, RFC 4954): 521 and 556 "does
 * not accept mail", 525 a disabled account, 523/524/538 encryption or authentication required.
 */
export function codeMeaning(code: number | null): BounceReason | null {
  switch (code) {
    case 521:
    case 556:
      return 'not_accept';
    case 525:
      return 'suspended';
    case 523:
    case 524:
    case 530:
    case 535:
    case 538:
      return 'security_error';
    default:
      return null;
  }
}
