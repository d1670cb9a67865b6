import { rule } from './phrases.js';

/**
 * Phrases about the sender's side (its IP, its domain's authentication, its envelope address, its
 * volume) and about the message: none of them says the recipient's address is gone, so every one is
 * a soft reason. Sources as in words-recipient.ts.
 */

/** A sending quota is the sender's, not a mailbox's: read before MAILBOX_FULL's "quota exceeded". */
export const SENDING_QUOTA = rule('rate_limited', [
  '(?:daily|hourly|sending|submission|relay|message|recipient|outbound) (?:message |sending |relay )?(?:quota|limit)',
  'throttling failure',
  'reached your (?:daily )?(?:sending |message )?(?:quota|limit)',
  'receiving mail (?:at a rate|too quickly)', // Gmail, Yahoo: one recipient gets too much
  'per hour message receive limit',
]);

export const NO_RELAYING = rule('no_relaying', [
  'relay(?:ing)? (?:access )?(?:denied|not (?:allowed|permitted)|prohibited|refused)',
  'relaying (?:mail )?to [^.;]{1,60} (?:not allowed|denied)',
  '(?:unable|not permitted|not allowed|refused) to relay',
  'we do not relay',
  'no relaying',
  'not an open relay',
  'insecure mail relay',
  'as a relay',
  '(?:domain|host) (?:is ?n.t|is not) in my list of allowed rcpthosts',
  'we don.t handle mail for',
  'not a gateway',
  'not local host',
  'not configured to relay',
  'open relay (?:is )?not allowed',
  'address is not verified', // Amazon SES will not relay for an unverified identity
]);

/** Authentication (SPF, DKIM, DMARC, ARC, SMTP AUTH) or encryption the receiver required. */
export const SECURITY_ERROR = rule('security_error', [
  '\\bspf\\b[^.;]{0,60}(?:fail|invalid|record|check|not (?:allowed|pass)|did ?n.t pass|does not pass)',
  'sender policy framework',
  '\\bdmarc\\b',
  '\\bdkim\\b[^.;]{0,60}(?:fail|invalid|not pass|did ?n.t pass|does not pass|sender invalid)',
  'no (?:passing|valid|acceptable)[^.;]{0,30} dkim signature',
  'authenticat\\w* (?:required|failed|failure|checks?|credentials|level|requirements|information)',
  '(?:not|un|fails? to|did ?n.t|did not|must) ?(?:be )?authenticat',
  'smtp authentication',
  'authentification (?:requise|invalide)',
  'must pass either spf or dkim',
  'arc validation',
  'starttls',
  '\\btls\\b[^.;]{0,30}(?:required|not supported|version|handshake)',
  'requires? (?:encryption|tls)',
  '(?:does not|doesn.t) support (?:tls|starttls|encryption)',
  'encryption (?:required|needed)',
  'certificate',
  'mta-sts',
  'dnssec',
  'tlsa',
  'application-specific password',
  'password (?:not accepted|incorrect|invalid)',
]);

/** The sending IP, host or network: a blocklist, a reputation, missing reverse DNS, a bad HELO. */
export const BLOCKED = rule('blocked', [
  'block ?list|black ?list|deny ?list',
  'blocked using',
  '(?:is|was|been) blocked by',
  '\\b(?:spamhaus|spamcop|sorbs|barracuda ?(?:central|reputation)|uceprotect|dnsbls?|rbls?|cbl|psbl|mailspike|invaluement|cloudmark|senderscore|abuseat)\\b',
  '(?<!not )listed (?:in|at|on|by|as) ',
  'reputation',
  '\\bptr\\b',
  'reverse (?:dns|lookup|hostname|name)',
  '\\brdns\\b',
  'client host (?:\\[[^\\]]{0,60}\\] )?(?:blocked|rejected|refused)',
  '(?:your|sending|sender|the|client|source|originating) (?:ip|host|server|network|mta)(?: address)?\\b[^.;]{0,40}\\b(?:blocked|banned|rejected|refused|not allowed|denied|listed|blacklisted)',
  '(?:access|mail|connections?|messages?) from (?:ip(?: address)? )?\\[?\\d{1,3}(?:\\.\\d{1,3}){3}\\]?[^.;]{0,30}(?:blocked|refused|rejected|not accepted|not allowed|denied)',
  'banned (?:sending )?(?:ip|sender)',
  'dynamic (?:ip|address|pool)',
  'dynamic/zombied',
  '(?:bad|invalid|illegal) (?:helo|ehlo)',
  'helo(?:/ehlo)? (?:command |argument )?(?:rejected|is invalid|not allowed)',
  'not currently accepting mail from your ip',
  'ip not in whitelist',
  'go away',
  'your network is',
  'not accepting connections',
  'connection (?:refused|dropped|rejected|denied)(?: by| from| for)',
  'too many (?:invalid|unknown|bad) (?:recipients|commands)',
  'excessive unknown recipients',
  'abusive',
  'confirm this mail server',
  'use the smtp server of your isp',
  'unverif(?:y|i)able sending ips',
  'cannot find your hostname',
  'cannot resolve your (?:address|hostname)',
  'ip name lookup failed',
  'spam ips',
  'sending spam',
  'unwanted messages',
  'not allowed to send mail from',
  'invalid ip for sending mail',
  'suspicious (?:activity|behaviou?r) (?:has been )?detected on (?:the|your) ip',
]);

/** The envelope sender (MAIL FROM): its address, its domain, an empty or unverified one. */
export const REJECTED = rule('rejected', [
  'sender (?:address |e-?mail address |e-?mail )?(?:is )?(?:rejected|denied|refused|blocked|invalid|not (?:allowed|authori[sz]ed|permitted|pre-approved|accepted))',
  'sender verif\\w* failed|sender verify failed|verification failed for',
  'sender (?:is in my black ?list|is spammer|was rejected)',
  'badmailfrom|envelope sender is',
  'sender[^.;]{0,40}null mx', // RFC 7505: the sender's domain takes no mail
  '(?:invalid|unknown|bad|bogus|unroutable|unverified) (?:envelope )?(?:sender|mail from|return path)',
  "(?:sender|mail from|envelope from|return-path)[^.;]{0,30}(?:domain|address)[^.;]{0,25}(?:not found|does ?n[o']t exist|must exist|is (?:invalid|empty|not valid)|unresolvable|not resolv)",
  'domain of sender address',
  'sender domain',
  'mail from not owned',
  '(?:empty|null|blank) (?:envelope )?(?:senders?|from:? addresses) (?:is |are )?not allowed',
  'returned mail not accepted',
  'emetteur invalide',
  '\\bbatv\\b',
  'administrative prohibition',
  'envelope (?:blocked|rejected)',
  'not allowed to post',
  'not subscribed to this group',
  'members-only',
  'only (?:accepts|accepting) (?:mail|messages) from (?:members|subscribers)',
  'sender (?:not in (?:the )?allowed|(?:was )?not authenticated for)',
  'provide a valid from',
  'from: domain is invalid',
  'mail sending denied',
  'your (?:e-?mail )?address has been blacklisted',
  'sending this from a different address',
  'sender is not allowed',
  'unresolvable rfc.?5321',
  'bad outbound sender',
  'not a registered gateway user',
  'permission to post', // Google Groups
  '投稿する権限',
]);

/** The message's headers or format (RFC 5322, MIME), not its content's meaning. */
export const CONTENT_ERROR = rule('content_error', [
  'rfc ?(?:5322|2822|822) (?:compliant|section|specifications)',
  'not (?:rfc ?)?(?:5322|2822)? ?compliant',
  'not rfc compliant',
  'duplicate header',
  '(?:messages?|mails?) without (?:an? |a valid )?(?:to|from|date|subject|message-id):? (?:header|field)',
  'multiple [^.;]{1,30} header',
  'multiple addresses in from', // Gmail, its reply often cut at the line's end
  'missing (?:a valid |required )?[^.;]{0,30}header',
  'header[^.;]{0,30} (?:invalid|malformed|too long|not accepted|exceeds|not permitted)',
  'invalid (?:mime|header|characters)',
  'bare (?:lf|line ?feed)',
  '8-bit data in (?:message )?header',
  'mime complexity',
  'improperly-formatted',
  '(?:message|mail) (?:is )?malformed',
  'malformed (?:message|mail|mime)',
  'encoded-word syntax',
  'unicode character in a disallowed header',
]);

export const RATE_LIMITED = rule('rate_limited', [
  'too many (?:connections|concurrent|sessions|recipients|messages|mails|emails|errors|smtp|con)',
  'rate (?:limit|limited|exceeded)|rate-limit',
  '(?:connection|sending|message) rate',
  'too (?:fast|quickly)',
  'try again slower|slow down',
  'throttl',
  'frequency (?:of receiving messages is )?limited',
  'max(?:imum)? (?:number of )?(?:emails|messages|connections|recipients) per (?:hour|connection|session|day|minute)',
  'exceeded (?:the )?(?:max(?:imum)? )?(?:number of )?(?:connections|messages|recipients)',
  'excessive (?:volume|connections)',
  'unusual rate of',
  'reached (?:the )?max(?:imum)? number of',
  'threshold exceeded',
  'trop de connexions',
  'numerous attempts',
  'exceeded permitted limits',
  'limit (?:exceeded|reached)',
]);

export const VIRUS_DETECTED = rule('virus_detected', [
  '(?<!spam or )virus',
  'malware',
  'infected',
  'trojan',
  '\\bworm\\b',
  '(?:potentially )?executable (?:attachment|file|content)',
]);

export const SPAM_DETECTED = rule('spam_detected', [
  '\\bspam\\b',
  '\\bube\\b',
  'unsolicited',
  'has detected that this message is(?! not)', // Gmail, its reply often cut at the line's end
  'junk ?mail',
  'bulk (?:e-?)?mail',
  'phish',
  'content filter',
  'mail content denied',
  'content rejected',
  '(?:banned|unacceptable|prohibited) content',
  'spam-like',
  'spamassassin|spambouncer|spamsignature|uribl|surbl',
  'blacklisted url',
  'scored as',
  'high probability of',
  'nature of the content',
  'mail rejete\\. mail rejected', // Orange's content filter
]);
