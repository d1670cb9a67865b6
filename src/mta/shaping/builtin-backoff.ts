// The MTA's built-in backoff rules: replies in which a provider says "stop sending from this IP
// for a while", and how long the MTA then leaves that (provider, source IP) alone. Retrying into a
// throttle is what turns a rate limit into a block (Microsoft's spam team on mailop: S3150 "is what
// you get when you don't slow down after seeing 4xx"), so a matching reply suspends every queued
// message for that provider from that IP, not only the one that got it.
//
// Rules are tried in order and the first match wins: the providers' own documented replies come
// first, the generic ones (any provider, any MX host) last. Durations follow KumoMTA's practice:
// minutes for a rate limit, half an hour to an hour for a reputation deferral or an IP block.
//
// What is deliberately NOT here: replies about one recipient. Gmail's "450 4.2.1 The user you are
// trying to contact is receiving mail at a rate that prevents additional messages", Yahoo's "450
// User is receiving mail too quickly", Apple's "421 4.7.1 Messages to <address> deferred due to
// excessive volume", Yandex's "451 4.5.1 The recipient <address> has exceeded their message rate
// limit", Mail.ru's "451 Ratelimit exceeded for mailbox <address>" and Microsoft's "554 5.2.122 The
// recipient has exceeded their limit" all say one mailbox gets too much mail: that recipient waits,
// the other recipients at the provider must not. The generic rules refuse any reply that names a
// recipient or mailbox for the same reason. Gmail's 421 4.7.26/27/29/30/32/40 "rate limited because
// ... SPF/DKIM/DMARC/TLS" are about one message's authentication, not the IP, and are left out too.
// Nor is Yahoo's "421 Max message per connection reached": the MTA opens a new connection, that is all.
//
// Whether a reply bounces or defers the recipient is classify-reply.ts's business; these rules only
// decide the suspension. A 5xx IP block (Microsoft's S3140/S3150, 5.7.606-649) suspends as well: the
// provider refuses the IP for everyone, so sending more of the queue into it only burns reputation.

export interface BackoffRule {
  /** provider name the rule is for; null: every provider */
  provider: string | null;
  /** tested (case-insensitive) against the whole reply line(s): "421 4.7.28 ... text" */
  pattern: RegExp;
  /** how long the (provider, source IP) is suspended, ms */
  suspendForMs: number;
  /** a short label for logs and docs */
  label: string;
  /** where the reply is documented */
  source: string;
}

const MINUTE = 60_000;

const KUMO_SHAPING = 'https://github.com/KumoCorp/kumomta/blob/main/assets/policy-extras/shaping.toml';
const GMAIL_ERRORS = 'https://support.google.com/a/answer/3726730';
const OUTLOOK_TROUBLESHOOTING = 'https://sendersupport.olc.protection.outlook.com/pm/troubleshooting.aspx';
const EXO_NDR =
  'https://learn.microsoft.com/en-us/exchange/mail-flow-best-practices/non-delivery-reports-in-exchange-online/non-delivery-reports-in-exchange-online';
const YAHOO_ERRORS = 'https://senders.yahooinc.com/smtp-error-codes/';

/** the reply names no recipient, mailbox or user (see the top of the file) */
const NOT_ONE_RECIPIENT = String.raw`(?![\s\S]*(?:\brecipients?\b|\bmailbox\b|\bthe user\b|\bto <?[^\s<>@]+@))`;
/** the reply is not about the message's authentication or transport security */
const NOT_AUTHENTICATION = String.raw`(?![\s\S]*\b(?:authenticat\w*|spf|dkim|dmarc|tls)\b)`;

export const BUILTIN_BACKOFF_RULES: readonly BackoffRule[] = [
  // --- Google -----------------------------------------------------------------------------------
  {
    // 4.7.28 is Gmail's rate limit for an unusual rate of unsolicited-looking mail, counted by IP,
    // netblock, SPF, DKIM or URL domain. The domain forms suspend the IP too: the domain's mail
    // keeps leaving from it, and Gmail counts the retries.
    provider: 'google',
    pattern: /^421[- ]4\.7\.28\b/i,
    suspendForMs: 10 * MINUTE,
    label: 'gmail-unsolicited-rate-limit',
    source: GMAIL_ERRORS,
  },
  {
    // the older form of the same limit: "421-4.7.0 [IP] Our system has detected an unusual rate of"
    provider: 'google',
    pattern: /^421[- ]4\.7\.0\b[\s\S]*\bunusual rate of\b/i,
    suspendForMs: 10 * MINUTE,
    label: 'gmail-unusual-rate',
    source: 'https://support.google.com/mail/?p=UnsolicitedRateLimitError',
  },
  {
    // "421 4.7.0 Try again later, closing connection.": Google's answer to too many connections
    provider: 'google',
    pattern: /^421[- ]4\.7\.0 try again later, closing connection\b/i,
    suspendForMs: 5 * MINUTE,
    label: 'gmail-try-again-later',
    source: 'https://support.google.com/a/answer/3221692',
  },

  // --- Microsoft (Exchange Online and Outlook.com) -----------------------------------------------
  // Microsoft's enhanced codes and S-numbers are its own, and the same edge (EOP) answers for both
  // providers and for on-premises domains fronted by it: these rules are for every provider.
  {
    // "451 4.7.650/4.7.651 The mail server [IP] has been temporarily rate limited due to IP
    // reputation (S775/S3114)": reputation, so half an hour; the answer to ignoring it is S3150
    provider: null,
    pattern: /^4\d\d[- ]4\.7\.65[01]\b/i,
    suspendForMs: 30 * MINUTE,
    label: 'microsoft-ip-reputation-rate-limit',
    source: OUTLOOK_TROUBLESHOOTING,
  },
  {
    // "451 4.7.500 Server busy. Please try again later from [IP]. (S77714)": EOP throttling the IP
    provider: null,
    pattern: /^4\d\d[- ]4\.7\.500\b[\s\S]*\bserver busy\b/i,
    suspendForMs: 10 * MINUTE,
    label: 'microsoft-server-busy',
    source: KUMO_SHAPING,
  },
  {
    // 4.7.850-899 (Exchange Online; 4.7.500-699 in older Exchange) "Access denied, please try again
    // later": suspicious activity seen from the IP, restricted while it is evaluated
    provider: null,
    pattern: /^4\d\d[- ]4\.7\.(?:[56]\d\d|8[5-9]\d)\b[\s\S]*\baccess denied, please try again later\b/i,
    suspendForMs: 30 * MINUTE,
    label: 'microsoft-ip-temporarily-restricted',
    source: EXO_NDR,
  },
  {
    // Outlook.com's "421 RP-001 ... We have limits for how many messages can be sent per hour and per
    // day" (RP-001 to RP-003)
    provider: 'outlook',
    pattern: /^4\d\d[- ][\s\S]*\bRP-00[1-3]\b/i,
    suspendForMs: 10 * MINUTE,
    label: 'outlook-rate-limit',
    source: OUTLOOK_TROUBLESHOOTING,
  },
  {
    // IP blocks: "550 5.7.1 ... part of their network is on our block list (S3140/S3150)",
    // "5.7.606-649 Access denied, banned sending IP", "5.7.511 Access denied, banned sender". They
    // last until delisted; an hour keeps the queue from hammering while the operator requests it.
    provider: null,
    pattern: /^5\d\d[- ](?:5\.7\.(?:511|6(?:0[6-9]|[1-4]\d))\b|[\s\S]*\((?:S3140|S3150)\))/i,
    suspendForMs: 60 * MINUTE,
    label: 'microsoft-ip-blocked',
    source: EXO_NDR,
  },

  // --- Yahoo and AOL ------------------------------------------------------------------------------
  {
    // "[TSS09]/[TSS11] All messages from IP will be permanently deferred; Retrying will NOT succeed",
    // the older "[TS03] All messages from IP permanently deferred" (553 or 421)
    provider: 'yahoo',
    pattern:
      /^[45]\d\d[- ][\s\S]*(?:\[TS(?:03|S09|S11)\]|\ball messages from \S+ (?:will be )?permanently deferred\b)/i,
    suspendForMs: 60 * MINUTE,
    label: 'yahoo-permanently-deferred',
    source: YAHOO_ERRORS,
  },
  {
    // "421 4.7.0 [TSS04] Messages from IP temporarily deferred due to unexpected volume or user
    // complaints" and its older forms [TS01], [TS02], [TS04]. Yahoo suggests retrying after about
    // four hours, KumoMTA suspends for two; an hour, as retries after it are spaced by the queue.
    provider: 'yahoo',
    pattern: /^4\d\d[- ][\s\S]*\[TSS?0[124]\]/i,
    suspendForMs: 60 * MINUTE,
    label: 'yahoo-temporarily-deferred',
    source: YAHOO_ERRORS,
  },

  // --- GMX, WEB.DE, mail.com ----------------------------------------------------------------------
  {
    // "421-web.de (mxweb113) Nemesis ESMTP Service not available / Service unavailable / Reject due
    // to policy restrictions / For explanation visit ...": the 421 forms are "too many messages in a
    // short period of time", a temporary administrative block, or overload; all mean "not now"
    provider: 'gmx',
    pattern: /^421[- ][\s\S]*\bnemesis esmtp service not available\b/i,
    suspendForMs: 10 * MINUTE,
    label: 'gmx-service-unavailable',
    source: 'https://postmaster.gmx.com/en/error-messages',
  },

  // --- Comcast ------------------------------------------------------------------------------------
  {
    // Comcast's RL0000xx codes are its rate limits (volume per IP)
    provider: 'comcast',
    pattern: /^4\d\d[- ][\s\S]*\bRL0000\d\d\b/i,
    suspendForMs: 10 * MINUTE,
    label: 'comcast-rate-limit',
    source: 'https://www.xfinity.com/support/articles/email-errors',
  },

  // --- Orange -------------------------------------------------------------------------------------
  {
    // "421 mwinf... ME Service refuse. Veuillez essayer plus tard. ... OFR_999": Orange suspends the
    // IP for two hours after earlier OFR codes went unheeded; trying sooner only extends it
    provider: 'orange',
    pattern: /^4\d\d[- ][\s\S]*\bOFR_999\b/i,
    suspendForMs: 120 * MINUTE,
    label: 'orange-ip-suspended',
    source: 'https://www.postmastery.com/orange-postmaster-smtp-error-codes-ofr/',
  },
  {
    // "421 mwinf... ME Trop de connexions, veuillez verifier votre configuration. Too many
    // connections, slow down. OFR005_104": more than Orange's 3 connections
    provider: 'orange',
    pattern: /^421[- ][\s\S]*(?:\btrop de connexions\b|\bOFR\d*_104\b)/i,
    suspendForMs: 10 * MINUTE,
    label: 'orange-too-many-connections',
    source: 'https://www.postmastery.com/orange-postmaster-smtp-error-codes-ofr/',
  },

  // --- Apple iCloud -------------------------------------------------------------------------------
  {
    // "451 4.7.1 Service unavailable - try again later": iCloud shedding load, often at the top of
    // the hour when every sender's batch arrives at once
    provider: 'icloud',
    pattern: /^451[- ]4\.7\.1 service unavailable - try again later\b/i,
    suspendForMs: 5 * MINUTE,
    label: 'icloud-service-unavailable',
    source: 'https://smtp.codes/icloud',
  },

  // --- Any provider -------------------------------------------------------------------------------
  {
    // Postfix's "421 4.7.0 host Error: too many connections from IP", Comcast's "Too many sessions
    // opened", iCloud's and others' "Too many connections": a short pause lets connections drain
    provider: null,
    pattern: new RegExp(
      String.raw`^4\d\d[- ]${NOT_ONE_RECIPIENT}[\s\S]*\btoo many (?:concurrent |simultaneous |parallel )?(?:smtp )?(?:connections|sessions)\b`,
      'i',
    ),
    suspendForMs: 5 * MINUTE,
    label: 'too-many-connections',
    source: 'https://www.postfix.org/postconf.5.html#smtpd_client_connection_count_limit',
  },
  {
    // "452 4.3.2 Connection rate limit exceeded", "421 4.1.0 IP Throttled - try again later",
    // Postfix's "421 4.7.0 Error: too much mail from IP", Gmail's "very low reputation ... mail sent
    // from your IP address has been temporarily rate limited": a rate limit on the sender
    provider: null,
    pattern: new RegExp(
      String.raw`^4\d\d[- ]${NOT_ONE_RECIPIENT}${NOT_AUTHENTICATION}[\s\S]*\b(?:rate[- ]?limit(?:s|ed|ing)?|ratelimit(?:ed)?|throttl(?:ed|ing)|too many (?:messages|mails|emails)|too much mail)\b`,
      'i',
    ),
    suspendForMs: 10 * MINUTE,
    label: 'rate-limited',
    source: 'https://www.postfix.org/postconf.5.html#smtpd_client_message_rate_limit',
  },
  {
    // "421 Try again later (IP)" (Mail.ru), "421 4.7.0 ... try again later": the server closes the
    // channel (RFC 5321's 421) and asks for later. Not with a 4.x.x other than 4.7.x ("421 4.3.0
    // Temporary System Problem. Try again later" is the server's trouble, not the sender's rate), and
    // not for greylisting, which wants the retry the queue will make anyway.
    provider: null,
    pattern: new RegExp(
      String.raw`^421[- ](?:4\.7\.\d{1,3}\b|(?!\d\.\d{1,3}\.\d{1,3}\b))${NOT_ONE_RECIPIENT}(?![\s\S]*\bgreylist)[\s\S]*\btry again later\b`,
      'i',
    ),
    suspendForMs: 5 * MINUTE,
    label: 'try-again-later',
    source: 'https://www.rfc-editor.org/rfc/rfc5321#section-4.2.2',
  },
];
