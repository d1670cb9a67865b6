// The built-in providers outside the big US ones (see builtin-providers.ts for the table's rules).
// Most of these publish no numbers at all: their entries keep today's default of 5 connections and
// say so, and mainly exist so that throttle replies suspend one provider, not every MX host alone.
// Recipients per message: 100, the RFC 5321 floor (RFC5321_MIN_RECIPIENTS in builtin-providers.ts;
// not imported from there, as that module imports this one).

import type { ProviderDefinition } from './provider-types.js';

const KUMO_SHAPING = 'https://github.com/KumoCorp/kumomta/blob/main/assets/policy-extras/shaping.toml';

export const INTL_PROVIDERS: readonly ProviderDefinition[] = [
  {
    // United Internet's consumer mail: GMX (mx00.emig.gmx.net, mx00.gmx.net), WEB.DE (mx-ha03.web.de)
    // and mail.com (mx00.mail.com). Their postmaster pages publish no connection or rate numbers, only
    // that a 421 may mean "Too many messages have been received in a short period of time": 5
    // connections is a conservative default. 100 per connection is the value mail.com gave KumoMTA.
    name: 'gmx',
    mxSuffixes: ['.gmx.net', '.gmx.com', '.web.de', '.mail.com'],
    maxConnections: 5,
    maxMessagesPerConnection: 100,
    maxMessagesPerMinute: null,
    maxRecipientsPerMessage: 100,
    warmup: true,
    sources: [
      'https://postmaster.gmx.net/en/best-practices',
      'https://postmaster.gmx.com/en/error-messages',
      'https://postmaster.web.de/error-messages',
      KUMO_SHAPING,
    ],
  },
  {
    // Yandex Mail and Yandex 360 domains: mx.yandex.ru, mx.yandex.net. Yandex documents only the
    // limits of its own users' sending (its 35 recipients per SMTP message bind them, not inbound
    // mail); for senders it publishes no connection count: 5 is the default.
    name: 'yandex',
    mxSuffixes: ['.yandex.ru', '.yandex.net'],
    maxConnections: 5,
    maxMessagesPerConnection: null,
    maxMessagesPerMinute: null,
    maxRecipientsPerMessage: 100,
    warmup: true,
    sources: ['https://yandex.com/support/mail/web/letter/create/send-many-letters.html'],
  },
  {
    // Mail.ru (mail.ru, bk.ru, inbox.ru, list.ru) and VK WorkSpace domains: mxs.mail.ru, emx.mail.ru.
    // Mail.ru's postmaster publishes sender reputation, not limits: 5 connections is the default.
    name: 'mailru',
    mxSuffixes: ['.mail.ru'],
    maxConnections: 5,
    maxMessagesPerConnection: null,
    maxMessagesPerMinute: null,
    maxRecipientsPerMessage: 100,
    warmup: true,
    sources: ['https://postmaster.mail.ru/', 'https://habrahabr.ru/company/mailru/blog/239963/'],
  },
  {
    // Zoho Mail, by data centre: mx.zoho.com (US), mx.zoho.eu, mx.zoho.in, mx.zoho.com.au, mx.zoho.jp,
    // mx.zohocloud.ca, mx.zoho.sa, and the newer mx1.zohomail.com. No published inbound limits: 5 is
    // the default. Mostly business domains, not a consumer provider: no warm-up schedule.
    name: 'zoho',
    mxSuffixes: [
      '.zoho.com',
      '.zoho.eu',
      '.zoho.in',
      '.zoho.com.au',
      '.zoho.jp',
      '.zohocloud.ca',
      '.zoho.sa',
      '.zohomail.com',
    ],
    maxConnections: 5,
    maxMessagesPerConnection: null,
    maxMessagesPerMinute: null,
    maxRecipientsPerMessage: 100,
    warmup: false,
    sources: ['https://www.zoho.com/mail/help/adminconsole/configure-email-delivery.html'],
  },
  {
    // Proton Mail (proton.me, protonmail.com, pm.me and custom domains): mail.protonmail.ch,
    // mailsec.protonmail.ch. No published inbound limits: 5 is the default. Small volumes: no warm-up.
    name: 'proton',
    mxSuffixes: ['.protonmail.ch'],
    maxConnections: 5,
    maxMessagesPerConnection: null,
    maxMessagesPerMinute: null,
    maxRecipientsPerMessage: 100,
    warmup: false,
    sources: ['https://proton.me/support/custom-domain'],
  },
  {
    // Orange (orange.fr, wanadoo.fr): smtp-in.orange.fr. Orange allows 3 simultaneous connections
    // per MX, shared by orange.fr and wanadoo.fr (one provider here, so one budget), and answers a
    // fourth with 421 "Trop de connexions ... Too many connections, slow down" (OFR..._104). It also
    // asks for no more than 1000 connection attempts an hour, which no field here expresses; with 3
    // connections and no per-connection cap the MTA opens few. No published per-connection cap.
    name: 'orange',
    mxSuffixes: ['.orange.fr', '.wanadoo.fr'],
    maxConnections: 3,
    maxMessagesPerConnection: null,
    maxMessagesPerMinute: null,
    maxRecipientsPerMessage: 100,
    warmup: true,
    sources: [
      'https://messagerie.orange.fr/postmaster.html',
      'https://www.postmastery.com/orange-protects-its-messaging-infrastructure-with-cloudmark-antispam-solution/',
      'https://www.postmastery.com/orange-postmaster-smtp-error-codes-ofr/',
      KUMO_SHAPING,
    ],
  },
];
