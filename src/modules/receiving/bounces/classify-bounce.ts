/**
 * THE bounce classifier: what a failure says about the address it was for.
 * The MTA asks it about each SMTP reply during delivery (mta/classify-reply.ts),
 * the inbound listener about each recipient of a bounce message (report.ts).
 * Pure: no I/O.
 *
 * Permanent means the address will not take mail (unknown user or domain, a
 * disabled or moved mailbox): only Permanent suppresses. A refusal of the
 * sender, its IP, the content or the volume is not the address's fault: it
 * is Transient, like a full mailbox (Amazon SES draws the same line). A
 * failure the words and codes do not explain is Undetermined.
 */

export type BounceType = 'Permanent' | 'Transient' | 'Undetermined';

export const BOUNCE_REASONS = [
  'user_unknown',
  'host_unknown',
  'mailbox_disabled',
  'address_moved',
  'mailbox_full',
  'message_too_large',
  'content_rejected',
  'spam_detected',
  'blocked',
  'policy',
  'expired',
  'system_error',
  'other',
] as const;
export type BounceReason = (typeof BOUNCE_REASONS)[number];

/** The reasons that are the address's own: the only ones that make a final failure Permanent. */
const ADDRESS_REASONS: ReadonlySet<BounceReason> = new Set([
  'user_unknown',
  'host_unknown',
  'mailbox_disabled',
  'address_moved',
]);

export interface Bounce {
  bounceType: BounceType;
  reason: BounceReason;
  /** the enhanced status (RFC 3463) as reported, else found in the text, else 5.0.0 / 4.0.0 */
  status: string;
  /** the server's words: the reply or the DSN's Diagnostic-Code */
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
}

const STATUS = /^[245]\.\d{1,3}\.\d{1,3}$/;
// an enhanced status inside text: not a piece of an IP address or a version number
const STATUS_IN_TEXT = /(?<![\d.])#?([245])\.(\d{1,3})\.(\d{1,3})(?![\d]|\.\d)/;
const REPLY_CODE = /(?:^|[\s;:([#<])([245][0-5]\d)(?:[ -]|$)/;

/** Classify one failed (or delayed) delivery of one recipient. */
export function classifyBounce(f: Failure): Bounce {
  const diagnostic = (f.diagnostic ?? '').replace(/\s+/g, ' ').trim();
  const reported = f.status && STATUS.test(f.status.trim()) ? f.status.trim() : null;
  const inText = statusInText(diagnostic);
  const code = f.code ?? replyCode(diagnostic);
  // the status that explains most: a DSN's generic 5.0.0 yields to the 5.1.1 its diagnostic quotes
  const telling =
    reported && !isGeneric(reported) ? reported : inText && !isGeneric(inText) ? inText : (reported ?? inText);
  const cls = telling ? telling[0] : code ? String(code)[0] : f.final === false ? '4' : '5';
  const status = reported ?? inText ?? (cls === '4' ? '4.0.0' : '5.0.0');
  const words = reasonOf(telling, diagnostic);
  // a reporter that gave up on a temporary failure (Action: failed, Status 4.x.x) let it expire in its queue
  const reason = cls === '4' && f.final === true && (words === 'system_error' || words === 'other') ? 'expired' : words;
  const bounceType: BounceType =
    cls === '4'
      ? 'Transient'
      : ADDRESS_REASONS.has(reason)
        ? 'Permanent'
        : reason === 'other'
          ? 'Undetermined'
          : 'Transient';
  return { bounceType, reason, status, diagnostic };
}

/** Whether a text names its failure: a status that decides (X.1.1, X.2.2…) or the words of one. */
export function isExplained(text: string): boolean {
  const status = statusInText(text);
  return (
    (!!status && !isGeneric(status)) || DECISIVE_WORDS.some(([, re]) => re.test(text)) || reasonInWords(text) !== null
  );
}

function statusInText(text: string): string | null {
  const m = STATUS_IN_TEXT.exec(text);
  return m ? `${m[1]}.${m[2]}.${m[3]}` : null;
}

function replyCode(text: string): number | null {
  const m = REPLY_CODE.exec(text);
  return m ? Number(m[1]) : null;
}

/**
 * Statuses that name the failure (RFC 3463, RFC 7505, RFC 7372): they decide
 * whatever the words say. The rest (x.0.0, x.7.1, …) say only "refused" and
 * leave the reason to the words.
 */
const DECISIVE: Record<string, BounceReason> = {
  '1.1': 'user_unknown',
  '1.2': 'host_unknown',
  '1.3': 'user_unknown',
  '1.6': 'address_moved',
  '2.2': 'mailbox_full',
  '2.3': 'message_too_large',
  '3.4': 'message_too_large',
  '4.7': 'expired',
  '7.20': 'policy',
  '7.21': 'policy',
  '7.22': 'policy',
  '7.23': 'policy',
  '7.24': 'policy',
  '7.25': 'policy',
  '7.26': 'policy',
  '7.27': 'policy',
  '7.28': 'policy',
  '7.10': 'policy',
  '7.11': 'policy',
  // the sender's address (bad syntax, no such domain): the recipient is not at fault
  '1.7': 'policy',
  '1.8': 'policy',
};

/** What a status means when the words say nothing more precise. */
function statusFallback(subject: string, detail: string): BounceReason {
  const key = `${subject}.${detail}`;
  if (key === '1.10') return 'host_unknown';
  if (key === '2.1') return 'mailbox_disabled';
  if (key === '4.4') return 'host_unknown';
  switch (subject) {
    case '3':
    case '4':
    case '5':
      return 'system_error';
    case '6':
      return 'content_rejected';
    case '7':
      return 'policy';
    default:
      return 'other';
  }
}

function isGeneric(status: string): boolean {
  const [, subject, detail] = status.split('.');
  return !(`${subject}.${detail}` in DECISIVE);
}

/**
 * Words no status overrides: servers put "552 5.1.1" on a full mailbox and
 * "511 … (#5.1.1)" on a domain without MX, and greylisting or a missing
 * reverse DNS come under whatever code the filter was configured with.
 */
const DECISIVE_WORDS: Array<[BounceReason, RegExp]> = [
  ['blocked', /\b(?:ip|domain|sender|sending) reputation\b|(?:poor|bad|low) reputation|excessive unknown recipients/i],
  [
    'policy',
    /greylist|gray ?list|reverse (?:dns|hostname|lookup)|\bptr\b|\brdns\b|receiving mail (?:at a rate|too quickly)|rate limit|throttl|daily (?:message |sending |relay )?(?:quota|limit)|(?:relay|sending) quota|sender verif\w* failed|verification failed for|identities failed|(?:e-?mail )?address is not verified|due to recipient(?:'s)? preferences/i,
  ],
  ['mailbox_full', /over ?quota|mailbox (?:is )?full|boite [^.]{0,30}pleine|exhausted (?:the )?(?:allowed )?storage/i],
  ['address_moved', /(?:user|mailbox|address) has moved|user not local|please try </i],
  ['host_unknown', /(?:valid|no) mx\b|no mail exchanger/i],
  ['user_unknown', /recipient address rejected: access denied/i],
];

function reasonOf(status: string | null, text: string): BounceReason {
  for (const [reason, re] of DECISIVE_WORDS) if (re.test(text)) return reason;
  if (status) {
    const [, subject, detail] = status.split('.') as [string, string, string];
    const decisive = DECISIVE[`${subject}.${detail}`];
    if (decisive) return decisive;
    return reasonInWords(text) ?? statusFallback(subject, detail);
  }
  return reasonInWords(text) ?? 'other';
}

/**
 * The words of rejections as servers write them, most telling first: a
 * refusal that names a blocklist or spam is about the sender even when it
 * also says "mailbox unavailable", and "Sender address rejected: Domain not
 * found" is the sender's domain, not the recipient's.
 */
const WORDS: Array<[BounceReason, RegExp]> = [
  [
    'mailbox_full',
    /mailbox (?:is )?full|mailbox exceeds?|storage space|exceeded the local limit|over ?quota|quota (?:exceeded|exceed|full)|exceeded (?:the )?(?:storage|quota)|(?:mailbox|disk|storage) (?:size )?(?:limit|quota) (?:exceeded|reached)|insufficient (?:disk )?(?:space|storage) for (?:the )?user|mailbox has exceeded|not enough (?:space|storage)|mail ?box (?:is )?over|user'?s? (?:mailbox|account) is (?:full|over)|maildir over quota|exceeds? (?:his|her|their|the recipient'?s?) (?:quota|storage)/i,
  ],
  [
    'message_too_large',
    /message (?:size|length) (?:exceeds|is too|limit)|(?:message|mail|email) (?:is )?too (?:large|big|long)|exceeds? (?:the )?(?:maximum|max|fixed) (?:message )?size|size limit|message file too big|too much mail data|message exceeds (?:maximum|local) (?:fixed )?size/i,
  ],
  [
    'expired',
    /retry (?:time(?:out)?|period) (?:exceeded|expired)|message expired|(?:delivery|retry) time (?:has )?(?:expired|exceeded)|could not be delivered (?:within|for) \d+|too long (?:in|on) (?:the )?queue|(?:in|on) the queue too long|queue ?(?:life|time) ?(?:exceeded|expired)|was not delivered within|unable to deliver (?:the )?message (?:within|for) \d+|envelope (?:has )?expired/i,
  ],
  [
    'blocked',
    /block ?list|black ?list|\b(?:spamhaus|spamcop|sorbs|barracuda ?(?:central|reputation)|uceprotect|dnsbls?|rbls?|sbl|xbl|pbl|cbl|psbl|mailspike|invaluement|senderscore)\b|blocked using|(?<!not )listed (?:in|at|on|by)|(?<!not )is listed|(?:ip|address|host|network|server|domain)\b[^.;]{0,40}\b(?:is |has been |was )?(?:blocked|banned|blacklisted|listed)|banned sending ip|poor reputation|bad reputation|low reputation|reputation (?:is|of)|\bs3150\b|\bbl\d{2,}\b|\bbl0{2,}\d+|\bts[s]?0[0-9]\b|\bdyn(?:amic)? ?(?:ip|address|pool)|client host (?:\[[^\]]*\] )?(?:blocked|rejected)|(?:connection|access) (?:refused|denied|rejected)(?: for| from)? (?:ip|\[?\d{1,3}\.\d)|rejected because (?:the )?ip|\breputation\b|not accepted from (?:this|your) ip|mail from \[?\d{1,3}(?:\.\d{1,3}){3}\]? (?:is )?(?:not allowed|refused|rejected)|excessive unknown recipients|open relay|unwanted messages|sent from the following ip/i,
  ],
  [
    'spam_detected',
    /\bspam\b|\bube\b|spam ?(?:detected|content|score|message)|junk ?mail|looks like (?:spam|junk)|unsolicited|bulk (?:mail|e-?mail)|suspected spam|classified as spam|identified as spam|phish|detected that this message is\b(?! not)/i,
  ],
  [
    'content_rejected',
    /virus|malware|header error|infected|trojan|\bworm\b|attachment|prohibited (?:file|content|attachment)|banned (?:file|content|attachment)|message content (?:rejected|not accepted)|content (?:rejected|filter|violation)|rejected (?:by|due to) (?:the )?content|header (?:is )?(?:invalid|rejected|malformed)|invalid (?:mime|header)|(?:message|mail) (?:was )?(?:rejected|refused) (?:by|due to) (?:the )?(?:filter|policy of the content)|missing a valid|not (?:rfc ?5322|rfc ?2822) compliant|(?:its|the message'?s?) content|(?:messages?|mails?) without (?:an? )?(?:to|from|date|subject|message-id):? (?:header|field)|missing (?:required )?(?:(?:to|from|date|subject|message-id):? )?(?:header|field)/i,
  ],
  [
    'policy',
    /sender address rejected|unrout\w* sender|provide a valid from\b|from:? domain is invalid|access denied|smtp authentication|sender (?:is )?(?:rejected|denied|blocked|not (?:allowed|authorized|permitted))|sender domain|\bdmarc\b|\bspf\b|\bdkim\b|unauthenticated|authentication (?:required|failed|failure)|not authenticated|\brelay(?:ing)? (?:access )?(?:denied|not (?:allowed|permitted))|relay access|unable to relay|not (?:permitted|allowed) to relay|we do not relay|rcpthosts|relaying (?:denied|prohibited)|\brdns\b|reverse (?:dns|hostname|lookup)|\bptr\b|helo|ehlo/i,
  ],
  [
    'mailbox_disabled',
    /(?:account|mailbox|user|address)\b[^.;]{0,30}\b(?:disabled|suspended|deactivated|inactive|locked|closed|frozen|expired|discontinued|terminated|not active|blocked)|(?:disabled|suspended|deactivated|inactive|closed) (?:account|mailbox|user)|mailbox (?:is )?(?:disabled|inactive)|(?:account|mailbox) is ?blocked|lack of use|falta de uso|due to inactivity|casilla (?:de correo )?(?:ha expirado|expirada|inactiva|deshabilitada|suspendida|bloqueada|cancelada)|cuenta (?:inactiva|deshabilitada|suspendida|bloqueada|cancelada)|(?:conta|caixa postal) (?:desativada|inativa|bloqueada|suspensa)/i,
  ],
  [
    'user_unknown',
    /user (?:unknown|not found|not exist|doesn'?t exist|does not exist|is unknown|name is not recognized)|unknown (?:user|recipient|address|local[- ]?part|mailbox|alias)|no such (?:user|recipient|mailbox|address|account|person|local user)|recipient (?:unknown|not found|does not exist|doesn'?t exist|address (?:rejected: )?(?:unknown|invalid|does not exist|access denied)|rejected)|(?:account|address|mailbox|e-?mail account)(?: that you tried to reach)? (?:does not exist|doesn'?t exist|not found|is not valid|unknown|not available)|invalid (?:recipient|mailbox|address|user)|not a valid (?:recipient|mailbox|user|address)|(?:mailbox|user|address) (?:unavailable|not available)|mailbox not (?:found|present)|no mailbox|doesn'?t have an? .{1,40}account|does not have an? .{1,40}account|not our customer|bad destination mailbox|recip(?:ient)?notfound|no (?:such|valid) recipients?|addressee unknown|unknown or illegal alias|not listed in|is not a known user|undeliverable address|address (?:is )?(?:invalid|unknown|rejected)|no longer (?:valid|available|exists)|(?:this|the) (?:user|recipient) doesn'?t|mailbox (?:name )?not allowed|couldn'?t be found|no mail ?box here by that name|email address could not be found|invalid (?:final delivery )?userid|見つかりません|存在しません|ディレクトリのリストにありません/i,
  ],
  [
    'address_moved',
    /(?:has|have|user) moved|moved to|no longer (?:at|with|works)|(?:changed|new) (?:e-?mail )?address|address changed/i,
  ],
  [
    'host_unknown',
    /host (?:or domain name )?(?:not found|unknown)|unknown host|domain (?:not found|does not exist|doesn'?t exist|unknown|is not valid|not exist)|no such (?:domain|host)|host not found|(?:domain|host) (?:is )?(?:not |un)reachable|could not find a gateway|nxdomain|no (?:mx|mail exchanger|route to host)|mx (?:record|lookup)|(?:unable|cannot|could not) (?:to )?(?:resolve|route)|domain[^.;]{0,40}(?:does not|doesn't) accept (?:e-?)?mail|null mx|unrout(?:e)?able|illegal host|bad destination system/i,
  ],
  [
    'policy',
    /policy|too many (?:messages|connections|recipients|emails|mails)|\brate(?:d| limit)|limit (?:exceeded|reached)|not (?:authorized|permitted|allowed)|(?<!connection )(?:denied|refused)|prohibited|forbidden|tls (?:is )?required|encryption required|must use (?:tls|starttls)|(?:does not|doesn'?t) support (?:tls|starttls)|volume|throttl|daily (?:relay |sending )?(?:quota|limit)|(?:relay|sending) quota|reached your .{0,20}quota/i,
  ],
  [
    'system_error',
    /loop|too many hops|hop count|system (?:error|failure|not available|full)|local error|internal (?:server )?error|server (?:error|failure|busy)|temporar(?:il)?y? (?:unavailable|failure|error|problem|not available|rejected)|resources?(?: temporarily)? unavailable|connection expired|name server reply|socket error|requests to connect|i\/o error|connection (?:timed out|refused|reset|lost|closed)|timed? ?out|network|configuration error|insufficient system|out of memory|try again/i,
  ],
];

function reasonInWords(text: string): BounceReason | null {
  if (!text) return null;
  for (const [reason, re] of WORDS) if (re.test(text)) return reason;
  return null;
}
