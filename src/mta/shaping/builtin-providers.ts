// The MTA's built-in table of mailbox providers: which MX host names belong to which provider, and
// the limits the MTA keeps towards each (per source IP). Operators may override any of it; these
// are the defaults, so they are conservative: a provider's own published number where there is
// one (cited), else a modest default that is said to be one. A value taken from KumoMTA's shipped
// shaping.toml is a community default, not a provider's promise, and is cited as such.
//
// Matching is by MX host name suffix. A host may end in suffixes of two providers (a provider's
// suffix may be a longer form of another's); the resolver picks the longest matching suffix, so
// this table only lists suffixes, in no particular order.

import { INTL_PROVIDERS } from './builtin-providers-intl.js';

export type { ProviderDefinition, ProviderLimits } from './provider-types.js';
import type { ProviderDefinition, ProviderLimits } from './provider-types.js';

/**
 * RFC 5321 §4.5.3.1.8: a server must accept at least 100 recipients in one transaction. Where a
 * provider documents no inbound cap, 100 is the most the MTA may count on, so it is the default
 * cap; a larger batch is split rather than tried and deferred recipient by recipient.
 */
export const RFC5321_MIN_RECIPIENTS = 100;

const KUMO_SHAPING = 'https://github.com/KumoCorp/kumomta/blob/main/assets/policy-extras/shaping.toml';

/** limits for an MX host in no provider: today's behaviour (5 connections per destination, no rate) */
export const UNKNOWN_PROVIDER_LIMITS: ProviderLimits = {
  maxConnections: 5,
  maxMessagesPerConnection: null,
  maxMessagesPerMinute: null,
  maxRecipientsPerMessage: null,
};

const MAJOR_PROVIDERS: readonly ProviderDefinition[] = [
  {
    // Gmail and Google Workspace share one MX fleet (gmail-smtp-in.l.google.com, aspmx.l.google.com,
    // smtp.google.com, aspmx2.googlemail.com). Google publishes no inbound connection or per-connection
    // limit: 10 connections is a conservative default and 50 messages per connection is KumoMTA's.
    // No rate: Google adapts to reputation and says so with 421 4.7.28 (see builtin-backoff.ts).
    // Its relay limits page says its servers take more than 100 recipients per transaction; 100 is kept.
    name: 'google',
    mxSuffixes: ['.google.com', '.googlemail.com'],
    maxConnections: 10,
    maxMessagesPerConnection: 50,
    maxMessagesPerMinute: null,
    maxRecipientsPerMessage: RFC5321_MIN_RECIPIENTS,
    warmup: true,
    sources: [
      'https://support.google.com/a/answer/81126',
      'https://support.google.com/a/answer/3726730',
      'https://support.google.com/a/answer/2956491',
      KUMO_SHAPING,
    ],
  },
  {
    // Exchange Online (Microsoft 365): <tenant>.mail.protection.outlook.com, the older
    // <tenant>.mail.eo.outlook.com, and <tenant>.<x>.mx.microsoft for tenants with inbound DANE.
    // Microsoft publishes no inbound connection limit; 10 and KumoMTA's 50 per connection are
    // defaults. Exchange Online's published recipient limits bind its own mailboxes' sending, not
    // inbound SMTP, so the RFC 5321 floor is used. Warm-up applies: EOP scores new IPs and defers
    // them with 451 4.7.650 until they have a history.
    name: 'microsoft365',
    mxSuffixes: ['.mail.protection.outlook.com', '.mail.eo.outlook.com', '.mx.microsoft'],
    maxConnections: 10,
    maxMessagesPerConnection: 50,
    maxMessagesPerMinute: null,
    maxRecipientsPerMessage: RFC5321_MIN_RECIPIENTS,
    warmup: true,
    sources: [
      'https://learn.microsoft.com/en-us/office365/servicedescriptions/exchange-online-service-description/exchange-online-limits',
      'https://techcommunity.microsoft.com/t5/exchange-team-blog/implementing-inbound-smtp-dane-with-dnssec-for-exchange-online/ba-p/3939694',
      KUMO_SHAPING,
    ],
  },
  {
    // Outlook.com consumer mail (hotmail.com, outlook.com, live.com, msn.com):
    // hotmail-com.olc.protection.outlook.com and regional hosts like eur.olc.protection.outlook.com;
    // .hotmail.com for the retired mx[1-4].hotmail.com hosts. Its policy asks senders not to open more than 500
    // simultaneous connections; 10 stays far below. 50 per connection is KumoMTA's default.
    name: 'outlook',
    mxSuffixes: ['.olc.protection.outlook.com', '.hotmail.com'],
    maxConnections: 10,
    maxMessagesPerConnection: 50,
    maxMessagesPerMinute: null,
    maxRecipientsPerMessage: RFC5321_MIN_RECIPIENTS,
    warmup: true,
    sources: [
      'https://sendersupport.olc.protection.outlook.com/pm/policies.aspx',
      'https://sendersupport.olc.protection.outlook.com/pm/troubleshooting.aspx',
      KUMO_SHAPING,
    ],
  },
  {
    // Yahoo and AOL: mta5.am0.yahoodns.net, mx-aol.mail.gm0.yahoodns.net; .mx.aol.com for AOL's
    // legacy mailin-0x.mx.aol.com hosts. Yahoo documents 20 messages per connection (it closes the
    // connection after the 20th without a reply code) and publishes no connection count, asking
    // senders to "treat our resources with respect": 10 is a conservative default.
    name: 'yahoo',
    mxSuffixes: ['.yahoodns.net', '.mx.aol.com'],
    maxConnections: 10,
    maxMessagesPerConnection: 20,
    maxMessagesPerMinute: null,
    maxRecipientsPerMessage: RFC5321_MIN_RECIPIENTS,
    warmup: true,
    sources: [
      'https://help.yahoo.com/kb/SLN3433.html',
      'https://senders.yahooinc.com/best-practices/',
      'https://senders.yahooinc.com/smtp-error-codes/',
    ],
  },
  {
    // iCloud Mail (icloud.com, me.com, mac.com and custom domains): mx01.mail.icloud.com,
    // mx02.mail.icloud.com. Apple's postmaster page publishes no limits. Community values range
    // from KumoMTA's 10 connections and 5 messages per connection to Validity's 150 and 50; the
    // lower end is taken.
    name: 'icloud',
    mxSuffixes: ['.icloud.com'],
    maxConnections: 10,
    maxMessagesPerConnection: 5,
    maxMessagesPerMinute: null,
    maxRecipientsPerMessage: RFC5321_MIN_RECIPIENTS,
    warmup: true,
    sources: ['https://support.apple.com/en-us/102322', KUMO_SHAPING],
  },
  {
    // Comcast / Xfinity (comcast.net): mx1.comcast.net, mx2.comcast.net. Comcast documents 25
    // simultaneous connections per sending IP (an older page said 10: 10 is kept, inside both) and
    // 100 recipients per message. 1000 messages per connection is the value Comcast gave KumoMTA.
    // Its documented rate (1000 messages an hour per netblock) is for IPv6 senders only, so no
    // rate is set here; its RL0000xx throttle replies are in builtin-backoff.ts.
    name: 'comcast',
    mxSuffixes: ['.comcast.net'],
    maxConnections: 10,
    maxMessagesPerConnection: 1000,
    maxMessagesPerMinute: null,
    maxRecipientsPerMessage: 100,
    warmup: true,
    sources: [
      'https://postmaster.comcast.net/',
      'https://spa.xfinity.com/postmaster',
      'https://www.xfinity.com/support/articles/email-errors',
      KUMO_SHAPING,
    ],
  },
];

/** every built-in provider; the international ones are in builtin-providers-intl.ts */
export const BUILTIN_PROVIDERS: readonly ProviderDefinition[] = [...MAJOR_PROVIDERS, ...INTL_PROVIDERS];
