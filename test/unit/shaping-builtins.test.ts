import { expect } from 'chai';
import { BUILTIN_BACKOFF_RULES, type BackoffRule } from '../../src/mta/shaping/builtin-backoff.js';
import { BUILTIN_PROVIDERS, UNKNOWN_PROVIDER_LIMITS } from '../../src/mta/shaping/builtin-providers.js';

/** the provider whose longest suffix ends the host name, as the resolver picks it (a bare name gets its dot) */
function providerOf(host: string): string | null {
  const matches = BUILTIN_PROVIDERS.flatMap((p) => p.mxSuffixes.map((suffix) => ({ name: p.name, suffix })))
    .filter(({ suffix }) => `.${host}`.endsWith(suffix))
    .sort((x, y) => y.suffix.length - x.suffix.length);
  return matches[0]?.name ?? null;
}

/** the first rule for that provider (or for every provider) the reply matches */
function firstRule(reply: string, provider: string | null): BackoffRule | undefined {
  return BUILTIN_BACKOFF_RULES.find((r) => (r.provider === null || r.provider === provider) && r.pattern.test(reply));
}

describe('built-in mailbox providers', function () {
  it('have unique lower-case names, and at least the twelve the MTA knows by name', function () {
    const names = BUILTIN_PROVIDERS.map((p) => p.name);
    expect(new Set(names).size).to.equal(names.length);
    for (const n of names) expect(n).to.match(/^[a-z0-9]+$/);
    const twelve = 'google microsoft365 outlook yahoo icloud gmx yandex mailru zoho proton comcast orange';
    expect(names).to.include.members(twelve.split(' '));
  });

  it('list dotted lower-case MX suffixes, each in one provider only, and cite an https source', function () {
    const owner = new Map<string, string>();
    for (const p of BUILTIN_PROVIDERS) {
      expect(p.mxSuffixes.length, p.name).to.be.above(0);
      for (const s of p.mxSuffixes) {
        expect(s, p.name).to.match(/^(\.[a-z0-9-]+)+$/);
        expect(owner.get(s), `${s} is in ${owner.get(s)} and ${p.name}`).to.equal(undefined);
        owner.set(s, p.name);
      }
      expect(
        p.sources.some((u) => new URL(u).protocol === 'https:'),
        p.name,
      ).to.equal(true);
    }
  });

  it('keep conservative limits: at most 10 connections, at most 100 recipients, positive whole numbers', function () {
    const positiveOrNull = (v: number | null) => v === null || (Number.isInteger(v) && v > 0);
    for (const p of BUILTIN_PROVIDERS) {
      expect(positiveOrNull(p.maxConnections) && p.maxConnections <= 10, p.name).to.equal(true);
      expect(positiveOrNull(p.maxMessagesPerConnection), p.name).to.equal(true);
      expect(positiveOrNull(p.maxMessagesPerMinute), p.name).to.equal(true);
      expect(positiveOrNull(p.maxRecipientsPerMessage), p.name).to.equal(true);
      expect(p.maxRecipientsPerMessage ?? 0, p.name).to.be.at.most(100);
    }
  });

  it('leave a host in no provider with today’s behaviour', function () {
    const today = { maxConnections: 5, maxMessagesPerConnection: null, maxMessagesPerMinute: null };
    expect(UNKNOWN_PROVIDER_LIMITS).to.deep.equal({ ...today, maxRecipientsPerMessage: null });
  });

  // MX host names as the providers publish them (or as seen in their replies and bounces)
  const hosts: Array<[string | null, string[]]> = [
    ['google', ['gmail-smtp-in.l.google.com', 'alt1.gmail-smtp-in.l.google.com', 'aspmx.l.google.com']],
    ['google', ['alt2.aspmx.l.google.com', 'aspmx2.googlemail.com', 'smtp.google.com']],
    ['microsoft365', ['example-com.mail.protection.outlook.com', 'microsoft-com.mail.protection.outlook.com']],
    ['microsoft365', ['contoso-com.mail.eo.outlook.com', 'contoso-com.o-v1.mx.microsoft']],
    ['outlook', ['hotmail-com.olc.protection.outlook.com', 'outlook-com.olc.protection.outlook.com']],
    ['outlook', ['eur.olc.protection.outlook.com']],
    ['yahoo', ['mta5.am0.yahoodns.net', 'mta7.am0.yahoodns.net', 'mx-eu.mail.am0.yahoodns.net']],
    ['yahoo', ['mx-aol.mail.gm0.yahoodns.net']],
    ['icloud', ['mx01.mail.icloud.com', 'mx02.mail.icloud.com']],
    ['gmx', ['mx00.emig.gmx.net', 'mx01.emig.gmx.net', 'mx00.gmx.net', 'mx-ha03.web.de', 'mx00.mail.com', 'web.de']],
    ['yandex', ['mx.yandex.ru', 'mx.yandex.net']],
    ['mailru', ['mxs.mail.ru', 'emx.mail.ru']],
    ['zoho', ['mx.zoho.com', 'mx3.zoho.com', 'mx.zoho.eu', 'mx1.zohomail.com']],
    ['proton', ['mail.protonmail.ch', 'mailsec.protonmail.ch']],
    ['comcast', ['mx1.comcast.net', 'mx2.comcast.net']],
    ['orange', ['smtp-in.orange.fr']],
    // another company, look-alikes, and gmail.com, which ends in mail.com but not in .mail.com
    [null, ['mx.example.org', 'gmail-smtp-in.l.google.com.example.net', 'notgoogle.com', 'gmail.com']],
    [null, ['mx1.mail.example.com', 'protection.outlook.com']],
  ];
  for (const [provider, names] of hosts) {
    for (const host of names) {
      it(`${host} → ${provider ?? 'no provider'}`, function () {
        expect(providerOf(host)).to.equal(provider);
      });
    }
  }
});

describe('built-in backoff rules', function () {
  const providers = new Set(BUILTIN_PROVIDERS.map((p) => p.name));

  it('have unique labels, known providers, https sources and sane suspensions', function () {
    const labels = BUILTIN_BACKOFF_RULES.map((r) => r.label);
    expect(new Set(labels).size).to.equal(labels.length);
    for (const r of BUILTIN_BACKOFF_RULES) {
      if (r.provider !== null) expect(providers.has(r.provider), r.label).to.equal(true);
      expect(new URL(r.source).protocol, r.label).to.equal('https:');
      expect(r.suspendForMs, r.label).to.be.within(60_000, 2 * 3_600_000);
      // case-insensitive, and stateless: a g or y flag would make test() remember lastIndex
      expect(r.pattern.flags, r.label).to.include('i');
      expect(r.pattern.flags, r.label).to.not.match(/[gy]/);
    }
  });

  // [provider of the MX, the reply as the provider writes it (documentation IPs), the rule expected]
  const throttles: Array<[string | null, string, string]> = [
    [
      'google',
      '421-4.7.28 [192.0.2.42      4] Our system has detected an unusual rate of\n' +
        '421-4.7.28 unsolicited mail originating from your IP address. To protect our\n' +
        '421-4.7.28 users from spam, mail sent from your IP address has been temporarily\n' +
        '421-4.7.28 rate limited. Please visit\n' +
        '421-4.7.28  https://support.google.com/mail/?p=UnsolicitedRateLimitError to\n' +
        '421 4.7.28 review our Bulk Email Senders Guidelines. z1si9679476pln.401 - gsmtp',
      'gmail-unsolicited-rate-limit',
    ],
    [
      'google',
      '421 4.7.28 Gmail has detected an unusual rate of unsolicited mail originating from your DKIM domain. ' +
        'To protect our users from spam, mail sent from your domain has been temporarily rate limited. […] - gsmtp',
      'gmail-unsolicited-rate-limit',
    ],
    [
      'google',
      '421-4.7.0 [192.0.2.80 15] Our system has detected an unusual rate of\n' +
        '421-4.7.0 unsolicited mail originating from your IP address. To protect our\n' +
        '421 4.7.0 users from spam, mail sent from your IP address has been temporarily […] - gsmtp',
      'gmail-unusual-rate',
    ],
    [
      'google',
      '421 4.7.0 Try again later, closing connection. (EHLO) a1si1234567wmq.0 - gsmtp',
      'gmail-try-again-later',
    ],
    [
      'google',
      '421 4.7.0 [192.0.2.5] This message is suspicious due to the very low reputation of the sending IP address. ' +
        'To protect our users from spam, mail sent from your IP address has been temporarily rate limited. ' +
        'For more information, go to Why has Gmail blocked my messages? https://support.google.com/mail/answer/188131',
      'rate-limited',
    ],
    [
      'outlook',
      '451 4.7.650 The mail server [192.0.2.52] has been temporarily rate limited due to IP reputation. ' +
        'For e-mail delivery information, see https://postmaster.live.com (S775) ' +
        '[Name=Protocol Filter Agent][AGT=PFA]',
      'microsoft-ip-reputation-rate-limit',
    ],
    [
      'microsoft365',
      '451 4.7.651 The mail server [192.0.2.5] has been temporarily rate limited due to IP reputation. ' +
        'For e-mail delivery information, see https://postmaster.live.com (S3114) ' +
        '[BN8NAM12FT066.eop-nam12.prod.outlook.com]',
      'microsoft-ip-reputation-rate-limit',
    ],
    [
      'microsoft365',
      '451 4.7.500 Server busy. Please try again later from [192.0.2.5]. (S77714) ' +
        '[DB5EUR03FT012.eop-EUR03.prod.protection.outlook.com]',
      'microsoft-server-busy',
    ],
    // as Exchange Online's NDR reference words it
    ['microsoft365', '451 4.7.850 Access denied, please try again later.', 'microsoft-ip-temporarily-restricted'],
    [
      'outlook',
      "421 RP-001 (BAY004-MC1F41) Unfortunately, some messages from 192.0.2.5 weren't sent. Please try again. " +
        'We have limits for how many messages can be sent per hour and per day. ' +
        'You can also refer to http://mail.live.com/mail/troubleshooting.aspx#errors.',
      'outlook-rate-limit',
    ],
    [
      'outlook',
      "550 5.7.1 Unfortunately, messages from [192.0.2.5] weren't sent. Please contact your Internet service " +
        'provider since part of their network is on our block list (S3150). You can also refer your provider to ' +
        'http://mail.live.com/mail/troubleshooting.aspx#errors. [DB3EUR04FT007.eop-eur04.prod.protection.outlook.com]',
      'microsoft-ip-blocked',
    ],
    [
      'microsoft365',
      '550 5.7.606 Access denied, banned sending IP [192.0.2.5]. To request removal from this list please visit ' +
        'https://sender.office.com/ and follow the directions.',
      'microsoft-ip-blocked',
    ],
    [
      'yahoo',
      '421 4.7.0 [TSS04] Messages from 192.0.2.25 temporarily deferred due to unexpected volume or user complaints ' +
        '- 4.16.55.1; see https://postmaster.yahooinc.com/error-codes',
      'yahoo-temporarily-deferred',
    ],
    [
      'yahoo',
      '421 4.7.0 [TS01] Messages from 192.0.2.25 temporarily deferred due to user complaints - 4.16.55.1; ' +
        'see http://postmaster.yahoo.com/421-ts01.html',
      'yahoo-temporarily-deferred',
    ],
    [
      'yahoo',
      '553 5.7.2 [TSS09] All messages from 192.0.2.25 will be permanently deferred; Retrying will NOT succeed. ' +
        'See https://postmaster.yahooinc.com/error-codes',
      'yahoo-permanently-deferred',
    ],
    [
      'yahoo',
      '421 4.7.1 [TS03] All messages from 192.0.2.25 permanently deferred; Retrying will NOT succeed. ' +
        'See http://postmaster.yahoo.com/421-ts03.html',
      'yahoo-permanently-deferred',
    ],
    [
      'gmx',
      '421-web.de (mxweb113) Nemesis ESMTP Service not available\n421-Service unavailable\n' +
        '421-Reject due to policy restrictions.\n' +
        '421 For explanation visit https://postmaster.web.de/en/error-messages?ip=192.0.2.5',
      'gmx-service-unavailable',
    ],
    // Comcast's page lists the code, not the whole line: the code in a reply of Comcast's layout
    ['comcast', '421 resimta-h1p-000000.sys.comcast.net 192.0.2.5 rate limited RL000003', 'comcast-rate-limit'],
    ['comcast', '421 - [Too many sessions opened]', 'too-many-connections'],
    ['comcast', '421 4.1.0 192.0.2.5 Throttled - try again later', 'rate-limited'],
    [
      'orange',
      '421 mwinf5c79 ME Trop de connexions, veuillez verifier votre configuration. Too many connections, slow down. ' +
        'OFR005_104 [104]',
      'orange-too-many-connections',
    ],
    [
      'orange',
      '421 mwinf5c77 ME Service refuse. Veuillez essayer plus tard. Service refused, please try later. OFR_999 [999]',
      'orange-ip-suspended',
    ],
    ['icloud', '451 4.7.1 Service unavailable - try again later', 'icloud-service-unavailable'],
    ['mailru', '421 Try again later (192.0.2.58). Please contact abuse@corp.mail.ru.', 'try-again-later'],
    // Postfix's own throttles, as any small provider's MX sends them
    [null, '421 4.7.0 mx.example.net Error: too many connections from 192.0.2.5', 'too-many-connections'],
    [null, '421 4.7.0 mx.example.net Error: too much mail from 192.0.2.5', 'rate-limited'],
    [null, '452 4.3.2 Connection rate limit exceeded.', 'rate-limited'],
  ];
  for (const [provider, reply, label] of throttles) {
    it(`${provider ?? 'any'}: ${reply.slice(0, 70)}… → ${label}`, function () {
      expect(firstRule(reply, provider)?.label).to.equal(label);
    });
  }

  it('each rule is reached by at least one of the replies above', function () {
    const reached = new Set(throttles.map(([, , label]) => label));
    for (const r of BUILTIN_BACKOFF_RULES) expect(reached.has(r.label), r.label).to.equal(true);
  });

  // replies that are no reason to stop sending to a whole provider; no rule, of any provider, matches
  const others: string[] = [
    '250 2.0.0 OK  1700000000 a1si1234567qkb.123 - gsmtp',
    '450 4.2.0 Mailbox busy',
    '452 4.2.2 Mailbox full',
    "452 4.2.2 The recipient's inbox is out of storage space. Please direct the recipient to " +
      'https://support.google.com/mail/?p=OverQuotaTemp a1si123 - gsmtp',
    '550 5.1.1 <user@example.com>: Recipient address rejected: User unknown in virtual mailbox table',
    "550 5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's " +
      'email address for typos or unnecessary spaces. https://support.google.com/mail/?p=NoSuchUser a1si123 - gsmtp',
    '554 5.7.1 Message rejected as spam',
    '550 5.7.1 [CS01] Message rejected due to local policy. Please visit https://support.apple.com/en-us/HT204137',
    '421 4.4.2 mx.example.net Error: timeout exceeded',
    '451 4.3.0 Local error in processing',
    '421 Service not available, closing transmission channel',
    '503 5.5.1 Bad sequence of commands',
    '421 4.3.0 Temporary System Problem.  Try again later (10). a1si123 - gsmtp',
    // one recipient receiving too much mail
    '450 4.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages ' +
      'from being delivered. https://support.google.com/mail/?p=ReceivingRate - gsmtp',
    '450 User is receiving mail too quickly',
    '421 4.7.1 Messages to user@icloud.com deferred due to excessive volume. Try again later - ' +
      'https://support.apple.com/en-us/HT204137',
    '451 4.5.1 The recipient <user@yandex.ru> has exceeded their message rate limit. ' +
      'Try again later. 1446150023-UcDbgKZo',
    '451 Ratelimit exceeded for mailbox user@mail.ru. Try again later.',
    '554 5.2.122 The recipient has exceeded their limit for the number of messages they can receive per hour.',
    "452 4.5.3 Your message has too many recipients. For more information regarding Google's sending limits, visit " +
      'https://support.google.com/mail/answer/6592 - gsmtp',
    // one message's authentication, not the IP
    '421 4.7.26 This mail has been rate limited because it is unauthenticated. Gmail requires all senders to ' +
      'authenticate with either SPF or DKIM.',
    "421 4.7.29 Your email has been rate limited because this message wasn't sent over a TLS connection. Gmail " +
      'requires all bulk email senders to use TLS/SSL for SMTP connections.',
    "421 4.7.40 Your email has been rate limited because the sending domain doesn't have a DMARC record, or the " +
      "DMARC record doesn't specify a DMARC policy.",
    // the per-connection cap, and greylisting: the queue's ordinary retry is the answer
    '421 Max message per connection reached, closing transmission channel',
    '421 4.7.0 [GL01] Message from (192.0.2.25) temporarily deferred - 4.16.50. ' +
      'Please refer to https://postmaster.yahooinc.com/error-codes',
    '451 4.7.1 Greylisting in action, please come back later',
    '450 4.2.0 <user@example.com>: Recipient address rejected: Greylisted, ' +
      'see http://postgrey.schweikert.ch/help/example.com.html',
    '421 4.7.1 Greylisted, please try again later',
  ];
  for (const reply of others) {
    it(`no rule: ${reply.slice(0, 80)}…`, function () {
      expect(BUILTIN_BACKOFF_RULES.filter((r) => r.pattern.test(reply)).map((r) => r.label)).to.deep.equal([]);
    });
  }
});
