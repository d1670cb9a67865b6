import { expect } from 'chai';
import { simpleParser } from 'mailparser';
import type { Tenant } from '../helpers/api.js';
import { dkimResults, startLiveWorld, verifiedDomain, waitEmail, type LiveWorld } from '../helpers/live.js';
import { smtpSend } from '../helpers/smtp-client.js';
import { SmtpSession } from '../helpers/smtp-pipelined.js';
import { makeCertificates, type Certificates } from '../helpers/https-receiver.js';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../helpers/wait.js';
import { plainMessage } from '../fixtures/report-builders.js';
import { DATABASE_KINDS } from '../helpers/databases.js';

const SIM = 'simulator.posthorn.test';
let n = 0;
const uid = (p: string) => `${p}-${Date.now().toString(36)}-${++n}`;

for (const kind of DATABASE_KINDS) {
  describe(`SMTP submission with an API key as the password (CONTRACT §5, issue 21) [${kind}]${kind === 'pg' ? ' @pg' : ''}`, function () {
    this.timeout(60_000);
    let w: LiveWorld;
    let t: Tenant;
    let from: string;
    let port: number;
    const auth = () => ({ user: 'any-name', pass: t.key });

    before(async function () {
      w = await startLiveWorld(
        'dkim.submit.test',
        'mta.submit.test',
        {
          smtp: { inbound: { enabled: false }, submission: { host: '127.0.0.1', port: 0, max_message_mb: 1 } },
        },
        { submission: true },
        kind,
      );
      port = w.api.running.submissionPort!;
      t = await w.api.tenant({ mode: 'live' });
      from = `app@${(await verifiedDomain(t, w.world)).domain}`;
    });
    after(async function () {
      await w.stop();
    });

    /** the project's email with that subject, once GET /v1/emails lists it */
    const listed = (tenant: Tenant, subject: string) =>
      waitFor(
        async () =>
          (await tenant.api.get('/v1/emails?limit=50')).body.data.find(
            (e: { subject: string }) => e.subject === subject,
          ) ?? null,
        10_000,
        `the email "${subject}"`,
      );

    it('queues a submitted message like POST /v1/emails; it leaves DKIM-signed, Bcc kept blind, custom headers kept', async function () {
      const to = `${uid('to')}@ok.test`;
      const hidden = `${uid('bcc')}@ok.test`;
      const subject = uid('Invoice');
      const raw = plainMessage({ from: `Billing <${from}>`, to, subject, text: 'Your invoice is attached.' }).replace(
        'MIME-Version: 1.0',
        'MIME-Version: 1.0\r\nX-Campaign: spring',
      );
      const r = await smtpSend(port, { from, to: [to, hidden], raw, auth: auth() });
      expect(r.ok, JSON.stringify(r)).to.equal(true);
      expect(r.ok && r.response).to.match(/queued as msg_/);
      const e = await listed(t, subject);
      expect(e).to.include({ environment: 'live', from: `Billing <${from}>` });
      expect(e.to).to.deep.equal([to]);
      await waitEmail(t.api, e.id, (x) => x.recipients.every((rc: { status: string }) => rc.status === 'delivered'));
      const msg = w.sink.messagesTo(to)[0];
      expect(await dkimResults(w.world, msg.raw)).to.deep.equal([`${from.split('@')[1]}:pass`]);
      const parsed = await simpleParser(msg.raw);
      expect(parsed.headers.get('x-campaign')).to.equal('spring');
      expect(msg.raw.toString()).to.not.include(hidden);
      expect(w.sink.messagesTo(hidden)).to.have.length(1);
    });

    it('a message submitted twice with the same Message-ID is stored and sent once', async function () {
      const subject = uid('Once');
      const raw = plainMessage({ from, to: `delivered@${SIM}`, subject });
      const test = await t.newKey({ mode: 'test' });
      for (let i = 0; i < 2; i++)
        expect(
          (await smtpSend(port, { from, to: [`delivered@${SIM}`], raw, auth: { user: 'x', pass: test.key } })).ok,
        ).to.equal(true);
      const all = (await test.api.get('/v1/emails?limit=50')).body.data.filter(
        (e: { subject: string }) => e.subject === subject,
      );
      expect(all).to.have.length(1);
      expect(all[0].simulated).to.equal(true);
    });

    it('refuses a wrong key, or a key without emails:send, with 535 5.7.8', async function () {
      const readOnly = await t.newKey({ mode: 'live', scopes: ['emails:read'] });
      for (const pass of ['ph_live_' + 'x'.repeat(40), readOnly.key, 'not a key']) {
        const r = await smtpSend(port, {
          from,
          to: ['a@ok.test'],
          raw: plainMessage({ from, to: 'a@ok.test', subject: 'x' }),
          auth: { user: 'u', pass },
        });
        expect(r.ok).to.equal(false);
        if (!r.ok)
          expect([r.code, r.response]).to.satisfy(([c, text]: [number, string]) => c === 535 && text.includes('5.7.8'));
      }
    });

    it('refuses a message over the size limit with 552 5.3.4, and a From domain that is not verified with 550 5.7.1', async function () {
      const big = plainMessage({ from, to: 'a@ok.test', subject: 'big', text: 'x'.repeat(1100 * 1024) });
      const r = await smtpSend(port, { from, to: ['a@ok.test'], raw: big, auth: auth() });
      expect(r.ok).to.equal(false);
      if (!r.ok)
        expect([r.code, r.response]).to.satisfy(([c, text]: [number, string]) => c === 552 && text.includes('5.3.4'));
      const foreign = await smtpSend(port, {
        from: 'a@unverified.test',
        to: ['a@ok.test'],
        raw: plainMessage({ from: 'a@unverified.test', to: 'a@ok.test', subject: 'x' }),
        auth: auth(),
      });
      expect(foreign.ok).to.equal(false);
      if (!foreign.ok)
        expect([foreign.code, foreign.response]).to.satisfy(
          ([c, text]: [number, string]) => c === 550 && text.includes('5.7.1'),
        );
    });

    it('refuses recipients past the 50th with 452 4.5.3 (the client sends them again in another transaction)', async function () {
      const to = Array.from({ length: 52 }, (_, i) => `r${i}-${uid('m')}@ok.test`);
      const subject = uid('Many');
      const r = await smtpSend(port, { from, to, raw: plainMessage({ from, to: to[0], subject }), auth: auth() });
      expect(r.ok, JSON.stringify(r)).to.equal(true);
      if (r.ok) {
        expect(r.rejected.map((x) => x.address)).to.deep.equal(to.slice(50));
        expect(r.rejected.every((x) => x.code === 452 && x.response.includes('4.5.3'))).to.equal(true);
      }
      const e = await listed(t, subject);
      expect(e.to.length + (e.cc?.length ?? 0) + (e.bcc?.length ?? 0)).to.equal(50);
    });
  });
}

describe('SMTP listeners with smtp.tls set: STARTTLS (issue 21)', function () {
  this.timeout(60_000);
  let w: LiveWorld;
  let t: Tenant;
  let from: string;
  let certs: Certificates;

  before(async function () {
    certs = makeCertificates();
    w = await startLiveWorld(
      'dkim.tls.test',
      'mta.tls.test',
      {
        smtp: {
          tls: { key: join(certs.dir, 'server.key'), cert: join(certs.dir, 'server.pem') },
          inbound: { host: '127.0.0.1', port: 0 },
          submission: { host: '127.0.0.1', port: 0 },
        },
      },
      { submission: true, inbound: true },
    );
    t = await w.api.tenant({ mode: 'live' });
    from = `app@${(await verifiedDomain(t, w.world)).domain}`;
  });
  after(async function () {
    await w.stop();
    rmSync(certs.dir, { recursive: true, force: true });
  });

  it('submission offers STARTTLS with the configured certificate; a client that requires TLS authenticates and sends over it', async function () {
    const subject = uid('Over TLS');
    const r = await smtpSend(w.api.running.submissionPort!, {
      from,
      to: ['tls@ok.test'],
      raw: plainMessage({ from, to: 'tls@ok.test', subject }),
      auth: { user: 'app', pass: t.key },
      requireTls: { ca: certs.caPem },
    });
    expect(r.ok, JSON.stringify(r)).to.equal(true);
    expect(r.ok && r.response).to.match(/queued as msg_/);
  });

  it('the MX listener offers STARTTLS too: a sending MTA that requires TLS delivers a report over it', async function () {
    const r = await smtpSend(w.api.running.inboundPort!, {
      from: '',
      to: ['postmaster@mta.tls.test'],
      raw: plainMessage({ from: 'mailer-daemon@client.test', to: 'postmaster@mta.tls.test', subject: 'hello' }),
      requireTls: { ca: certs.caPem },
    });
    expect(r.ok, JSON.stringify(r)).to.equal(true);
  });
});

describe('SMTP listeners with smtp.reverse_dns: the client name through dns.resolvers (issue 21)', function () {
  this.timeout(60_000);
  let w: LiveWorld;

  before(async function () {
    w = await startLiveWorld(
      'dkim.ptr.test',
      'mta.ptr.test',
      { smtp: { reverse_dns: true, inbound: { host: '127.0.0.1', port: 0 }, submission: { enabled: false } } },
      { inbound: true },
    );
    w.world.add('1.0.0.127.in-addr.arpa', 'PTR', 'client.ptr.test');
  });
  after(async function () {
    await w.stop();
  });

  it("greets a client by the name its address's PTR record gives in the configured DNS", async function () {
    const session = await SmtpSession.open(w.api.running.inboundPort!);
    await session.close();
    expect(session.ehlo.split('\n')[0]).to.match(/Nice to meet you, client\.ptr\.test$/);
  });
});

describe('SMTP submission under limits.requests_per_second (issue 21)', function () {
  this.timeout(60_000);
  let w: LiveWorld;
  let t: Tenant;
  let from: string;

  before(async function () {
    // 40 connections at once from 127.0.0.1: over smtp.max_clients_per_ip's default of 20
    w = await startLiveWorld(
      'dkim.rate.test',
      'mta.rate.test',
      {
        limits: { requests_per_second: 20 },
        smtp: { max_clients_per_ip: 50, inbound: { enabled: false }, submission: { host: '127.0.0.1', port: 0 } },
      },
      { submission: true },
    );
    t = await w.api.tenant({ mode: 'test' });
    from = `app@${(await verifiedDomain(t, w.world)).domain}`;
  });
  after(async function () {
    await w.stop();
  });

  it("messages over the key's rate are refused with 421 4.7.0 and not stored; another key is not held back", async function () {
    const send = (pass: string, subject: string) =>
      smtpSend(w.api.running.submissionPort!, {
        from,
        to: [`delivered@${SIM}`],
        raw: plainMessage({ from, to: `delivered@${SIM}`, subject }),
        auth: { user: 'app', pass },
      });
    const tag = uid('burst');
    // 40 at once against 20 a second: the bucket holds 20 and refills far slower than 40 arrive
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => send(t.key, `${tag}-${i}`)));
    const refused = answers.filter((a) => !a.ok);
    expect(refused.length).to.be.at.least(1);
    for (const r of refused)
      if (!r.ok)
        expect([r.code, r.response]).to.satisfy(
          ([c, text]: [number, string]) => c === 421 && text.includes('4.7.0') && /retry in \d+ s/.test(text),
        );
    const other = await t.newKey({ mode: 'test' });
    expect((await send(other.key, uid('other'))).ok).to.equal(true);
    const stored = (await t.api.get('/v1/emails?limit=100')).body.data.filter((e: { subject: string }) =>
      e.subject.startsWith(tag),
    );
    expect(stored.length).to.equal(40 - refused.length);
  });
});
