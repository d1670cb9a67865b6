import { firstMatch, rule } from './phrases.js';
import type { BounceReason } from './reasons.js';

/**
 * What big providers mean by their own codes and phrases, read before the generic phrase tables:
 * a provider's documented code names its reason better than any word around it. Every entry comes
 * from the provider's postmaster or help pages (Microsoft's Exchange Online NDR list, Yahoo's SMTP
 * error codes, Orange's, Cox's and Spectrum's AUP codes, GoDaddy's IB codes, i.ua's error pages,
 * Tencent's, Mimecast's and Zoho's error lists) as sisimai's tests quote them. Pure.
 */

/** Phrases one provider uses with a meaning the generic tables would misread. */
const PROVIDER_PHRASES = [
  // Microsoft 365 / Exchange Online: the recipient's organisation refused the sender, not the address
  rule('rejected', [
    'sender (?:was )?not authenticated (?:by|for) (?:organi[sz]ation|group|mailbox|public folder)',
    'sender not in allowed-senders list',
    'access denied, spam abuse detected',
    'isn.t on the recipient.s list of senders',
    'delivery not authorized, message refused(?! by recipient)',
    'mail rejected by destination domain', // Zoho 541 5.4.1
    'mail is rejected by recipients', // Tencent
    'suspected spam(?! ip)', // Tencent: the sender is suspected
  ]),
  rule('blocked', [
    'access denied, (?:banned sending ip|banned sender|rejected by recipient|bad helo|please try again later)',
    'using customer block list',
    'traffic not accepted from this ip',
    'suspected (?:bounce attacks|spam ip)', // Tencent
    'connection denied',
    'temporarily deferred due to (?:unexpected volume or )?user complaints', // Yahoo TSS04
    'will be permanently deferred', // Yahoo TSS09/TSS11
    'try again later, closing connection', // Gmail at HELO
    'greylist|graylist',
    'internal resources are temporarily unavailable', // Mimecast greylisting / reputation
  ]),
  rule('user_unknown', [
    'recipient address rejected: access denied', // Microsoft 365's directory-based edge blocking
    'dd this user doesn.t have a', // Yahoo, at the end of DATA
    '#5\\.1\\.0 address rejected', // Google Workspace's unknown user
    'requested action not taken: mailbox unavailable \\(-?\\d{1,12}:\\d{1,6}:-?\\d{1,12}\\)', // Outlook.com: no such user
    '<[^>]{1,255}>: recipient address rejected\\.(?:$| )', // au (KDDI): a bare "Recipient address rejected."
    '<[^>\\s]{1,255}@ezweb\\.ne\\.jp>: user unknown', // au: its directory names the address, its filter does not
  ]),
  rule('suspended', ['access denied, banned recipient', 'is a deactivated mailbox']),
  rule('rate_limited', [
    'tenant has exceeded threshold',
    'frequency (?:of receiving messages )?(?:is )?limited', // Tencent
    'recipient thread limit exceeded',
  ]),
  rule('policy_violation', [
    'email policy violation detected', // Zoho 5.7.7
    'not accepted for policy reasons', // Yahoo PH01
    'anti-spoofing policy',
    'host network,? not allowed', // Mimecast's geographic restriction
    'content examination policy',
    'policy violation detected \\(as',
    'content presents a potential', // Gmail: "… security issue", often cut at the line's end
    'illegal attachment',
  ]),
  rule('not_accept', ['account inbounds disabled', 'no mail-enabled subscriptions']),
  rule('on_hold', ['account outbounds disabled']), // Mimecast: held until the account may send again
  rule('virus_detected', ['detected by zoho mail']),
  rule('spam_detected', ['rejected due to spam classification']), // Google Groups, whatever SPF advice follows
  rule('syntax_error', ['bad address syntax']),
];

/** Orange and La Poste end their replies with a code: "OFR_416", "OFR006_102", "LPN007_420". */
const ORANGE: Record<string, BounceReason> = {
  '101': 'blocked',
  '102': 'blocked',
  '103': 'blocked',
  '104': 'rate_limited',
  '305': 'security_error',
  '401': 'security_error',
  '402': 'security_error',
  '403': 'rejected',
  '405': 'rejected',
  '415': 'rejected',
  '416': 'user_unknown',
  '417': 'mailbox_full',
  '420': 'suspended',
  '421': 'rejected',
  '426': 'suspended',
  '505': 'system_error',
  '506': 'spam_detected',
  '510': 'blocked',
  '514': 'exceed_limit',
  '517': 'security_error',
  '630': 'policy_violation',
  '999': 'blocked',
};

/** Cox's "AUP#CXBL"-style codes. */
const COX: Record<string, BounceReason> = {
  cxbl: 'blocked',
  cdrbl: 'blocked',
  cxdns: 'blocked',
  cxsndr: 'security_error',
  cxsmtp: 'rejected',
  cxcnct: 'rate_limited',
  cxmxrt: 'rate_limited',
  cxthrt: 'rejected',
  cxmj: 'rejected',
};

/** Spectrum's (Charter's) four-digit "AUP#I-1310" codes, by range. */
const SPECTRUM: Array<[number, number, BounceReason]> = [
  [1000, 1000, 'blocked'],
  [1010, 1080, 'rejected'],
  [1090, 1090, 'system_error'],
  [1100, 1150, 'blocked'], // no reverse DNS
  [1160, 1190, 'policy_violation'],
  [1200, 1250, 'blocked'],
  [1260, 1260, 'network_error'],
  [1300, 1490, 'rate_limited'],
  [1500, 1520, 'rejected'],
  [1530, 1530, 'exceed_limit'],
  [1540, 1550, 'rate_limited'],
  [1560, 1560, 'policy_violation'],
  [1580, 1580, 'rate_limited'],
];

/** GoDaddy's (Secureserver's) "IB" codes. */
const GODADDY: Record<string, BounceReason> = {
  ib007: 'rate_limited',
  ib101: 'rate_limited',
  ib103: 'blocked',
  ib104: 'blocked',
  ib105: 'blocked',
  ib106: 'blocked',
  ib108: 'blocked',
  ib110: 'blocked',
  ib111: 'blocked',
  ib112: 'blocked',
  ib113: 'blocked',
  ib212: 'spam_detected',
  ib401: 'security_error',
  ib501: 'content_error',
  ib502: 'content_error',
  ib504: 'rate_limited',
  ib506: 'rejected',
  ib508: 'security_error',
  ib510: 'rate_limited',
  ib605: 'rate_limited',
  ib607: 'rate_limited',
  ib705: 'virus_detected',
};

/** i.ua links each refusal to "mail.i.ua/err/N/". */
const IUA: Record<string, BounceReason> = {
  '1': 'no_relaying',
  '2': 'user_unknown',
  '3': 'suspended',
  '4': 'mailbox_full',
  '5': 'rate_limited',
  '6': 'no_relaying',
  '7': 'blocked',
  '8': 'rejected',
  '9': 'blocked',
  '10': 'filtered',
};

const ORANGE_CODE = /\b(?:ofr|lpn|ouk)[a-z]{0,3}\d{0,3}_(\d{3})\b/;
const AUP_CODE = /aup#(?:[a-z]{1,3}-?(\d{4})|([a-z]{2,6}\d{0,4}))\b/;
const GODADDY_CODE = /\b(ib\d{3})\b/;
const IUA_CODE = /\.i\.ua\/err\/(\d{1,2})\//;

/** A provider's own code or phrase in a lower-cased reply, and the reason it stands for. */
export function providerReason(text: string): BounceReason | null {
  const orange = ORANGE_CODE.exec(text)?.[1];
  if (orange && ORANGE[orange]) return ORANGE[orange];
  const aup = AUP_CODE.exec(text);
  if (aup) {
    const [, number, name] = aup;
    const spectrum = number ? SPECTRUM.find(([lo, hi]) => Number(number) >= lo && Number(number) <= hi) : undefined;
    const cox = name
      ? (COX[name] ?? (/^ipbl/.test(name) ? 'blocked' : /^urlbl/.test(name) ? 'spam_detected' : null))
      : null;
    if (spectrum) return spectrum[2];
    if (cox) return cox;
  }
  const godaddy = GODADDY_CODE.exec(text)?.[1];
  if (godaddy && GODADDY[godaddy]) return GODADDY[godaddy];
  const iua = IUA_CODE.exec(text)?.[1];
  if (iua && IUA[iua]) return IUA[iua];
  return firstMatch(PROVIDER_PHRASES, text);
}
