import { rule } from './phrases.js';

/**
 * Phrases about the recipient's mailbox or domain, as servers write them (Postfix, Exim, Sendmail,
 * qmail, Courier, Exchange and Microsoft 365, Gmail, Yahoo, iCloud, Zoho, Yandex, Mail.ru, GMX,
 * Orange, Japanese carriers …). Sources: RFC 3463/5321 texts, the providers' postmaster pages, and
 * the replies quoted in sisimai's public test expectations (facts, reworded as our own patterns).
 */

export const MAILBOX_FULL = rule('mailbox_full', [
  'mail ?box (?:is )?(?:full|over ?quota)',
  'mail ?box[^.;]{0,30} (?:full|exceeded|exceeds|quota)',
  'full mail ?box',
  'over ?quota',
  'quota (?:limit )?(?:exceeded|exceed|full|violation|reached)',
  'speicherplatz',
  '(?:disk|storage|maildir|account|user|e-?mail) (?:space )?quota',
  'exceeded (?:his |her |their |the |its )?(?:storage|quota|mailbox)',
  'exceeds? (?:his |her |their |the |its )?(?:storage|quota)',
  'exceeded storage allocation', // RFC 5321's text for 552
  '(?:insufficient|not enough|no) (?:free )?(?:disk )?(?:space|storage)(?: left)? (?:for|on|in)',
  'not sufficient disk space',
  'no space left on device',
  'mailfolder is full',
  'has too many messages',
  'space has been used up',
  'out of storage space', // Gmail
  'exhausted (?:the |its |his |her )?(?:allowed )?storage',
  'speichervolumen',
  'account storage limit',
  'would exceed (?:the )?(?:maximum )?(?:allowed )?storage',
  'too much mail data', // NTT docomo's full mailbox
  'boite (?:du destinataire |aux lettres )?(?:est )?pleine', // Orange, SFR
  'casilla (?:de correo )?(?:llena|excedida)',
  'postfach (?:ist )?voll', // GMX, web.de
  'переполнен', // Mail.ru, Yandex: "mailbox is full"
  'превышен',
]);

export const EXCEED_LIMIT = rule('exceed_limit', [
  'message (?:size|length|file) (?:exceeds|is too|too|limit)',
  '(?:message|mail|email|e-mail|attachment)s? (?:is |are )?too (?:large|big|long)',
  '(?:exceeds?|exceeded) (?:the |our |google.s )?(?:max(?:imum)?|fixed|allowed|permitted)?[^.;]{0,25}\\bsize',
  '(?:mail|message|email|e-mail) size (?:limit|exceeded|exceeds)',
  'size limit',
  'max(?:imum)? (?:message|email|mail) size',
  'line limit exceeded',
  'header size exceeds',
  'taille limite du message',
  'message header size',
]);

export const SUSPENDED = rule('suspended', [
  '(?<!ip |sender |from |sending |your )(?:account|mail ?box|user|recipient|e-?mail address)\\b[^;]{0,40}\\b(?:disabled|suspended|deactivated|inactive|frozen|terminated|discontinued|archived|not active|has expired)',
  '(?:account|mail ?box|recipient) (?:is |has been )?(?:blocked|locked|closed|expired)',
  '(?:disabled|suspended|deactivated|inactive|frozen|archived|closed|locked) (?:account|mail ?box|user|recipient)',
  'temporar(?:il)?y (?:locked|inactive)',
  '(?:has been|is currently|currently) suspended',
  'user suspended',
  'suspend(?:ed)? the service',
  'is no longer (?:valid|active|in use)',
  'no longer accepts mail',
  'lack of use',
  'due to inactivity',
  'mailbox cannot be accessed',
  'compte du destinataire est bloque',
  'boite du destinataire archivee',
  'falta de uso',
  'cuenta (?:inactiva|deshabilitada|suspendida|bloqueada)',
  'casilla (?:de correo )?(?:inactiva|deshabilitada|suspendida|bloqueada|ha expirado|expirada)',
  '(?:conta|caixa postal) (?:desativada|inativa|bloqueada|suspensa)',
]);

export const HAS_MOVED = rule('has_moved', [
  'has been replaced by',
  '(?:user|mail ?box|address|recipient) has moved',
  'recipient no longer on server', // iCloud
  'user not local; please try',
  'no longer (?:at|with) this (?:address|company|organi[sz]ation)',
]);

export const USER_UNKNOWN = rule('user_unknown', [
  "user (?:unknown|not found|not known|not exist|does ?n[o']t exist|is unknown|missing home directory)",
  'unknown (?:user|recipient|address|local[- ]?part|mail ?box|alias|e-?mail address|account)',
  'no such (?:user|recipient|mail ?box|address|account|person|local user)',
  'no (?:mail ?box|account|one)(?: here)? (?:by that name|at this address)',
  "(?:recipient|address|mail ?box|account|user|e-?mail address|addressee)(?: that you tried to reach)? (?:does ?n[o']t exist|(?:was )?not found|could not be found|couldn.t be found|is unknown|unknown|not exist)",
  'recipient (?:is )?(?:not (?:ok|local|accepted|valid)|rejected|invalid)',
  '(?:address|recipient|user|mail ?box) (?:wasn.?t|was not|could not be|couldn.?t be) found',
  '(?:recipient|address|user|mailbox) (?:is )?(?:not|no longer) (?:listed|known|registered)',
  'invalid (?:recipient|mail ?box|address|user|e-?mail address|final delivery userid)',
  'not a (?:valid|known|local) (?:recipient|mail ?box|user|address)',
  'is not a (?:valid mailbox|known user|local address)',
  'bad (?:destination )?(?:mail ?box|recipient)',
  'mail ?box (?:is )?(?:unavailable|not available|invalid|not present|not found)',
  'requested action not taken: mailbox unavailable',
  'address (?:is )?(?:invalid|unknown|does not exist)',
  'recipient address rejected: (?:access denied|invalid|user)',
  'no (?:valid )?recipients?(?: found)?,? bye',
  'addressee unknown',
  "(?:does ?n[o']t|does not) have an? [^;]{1,60} account", // Yahoo: "… a yahoo.com account"
  'recip(?:ient)? ?not ?found',
  'badrcptto|validrcptto|badrecipientto',
  'not listed in (?:the )?(?:domino )?(?:directory|public name & address book|address book)',
  'not in (?:the )?(?:directory|address book)',
  'this email address is wrong',
  'utilisateur inconnu',
  'destinataire (?:invalide|inconnu)',
  'no existe',
  'nessun utente',
  '(?:empf[aä]nger|benutzer|adresse) (?:ist )?unbekannt', // GMX, web.de, T-Online
  '(?:empf[aä]nger|postfach|adresse) (?:wurde )?nicht gefunden',
  'не существует', // Russian: does not exist
  'нет такого',
  '見つかりません', // Japanese: not found
  '存在しません',
  'ディレクトリのリストにありません',
]);

/** The recipient's own rules refused this sender or message; the address itself is fine. */
export const FILTERED = rule('filtered', [
  'message filtered',
  '(?:due to|by) (?:the )?(?:user|recipient)(?:.s)? (?:rules|preferences|filter)',
  'recipient(?:.s)? preferences',
  'refuses? to (?:receive|accept)',
  'user reject',
  'blocked by the recipient',
  'only accepting mail from',
  'not accepting any mail',
  'restricted sms e-?mail',
  'account is protected by',
  'disabled by user filter',
  'recipient rules',
  'domain filter',
  '(?:550 |: ?): user unknown', // au (KDDI): its reception filter answers with an empty address
]);

export const HOST_UNKNOWN = rule('host_unknown', [
  'host (?:or domain name )?(?:not found|unknown)(?!, try again)',
  'unknown (?:host|domain)',
  "domain (?:name )?(?:not found|does ?n[o']t exist|unknown|is not valid|must exist|not exist)",
  'no such (?:domain|host)',
  '(?:no|find a) valid mx', // qmail's chkuser: "can't find a valid MX for rcpt domain"
  'nxdomain',
  'nonexistent domain',
  'name or service not known',
  'unrout(?:e)?able address',
  'the account or domain may not exist',
  'could not find a gateway',
  'domain is not reachable', // Outlook.com: no usable DNS for the domain
  'no (?:mx|a|mail exchanger)(?: or a)? (?:record|host|address)',
  'couldn.t find any host',
  'illegal host',
  'bad destination system',
]);

export const NOT_ACCEPT = rule('not_accept', [
  'null mx',
  "(?:does ?n[o']t|does not|will not) accept (?:any )?(?:e-?)?mail(?! from)",
  'accepts no mail',
  'mail receiving disabled',
  'no route for current request',
  'no mx (?:record )?found for domain',
  'indicated no smtp service', // Exim, for a null MX
  'couldn.t find a mail exchanger or ip address', // qmail: the domain has neither MX nor A
]);
