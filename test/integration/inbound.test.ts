import { expect } from 'chai';
import { setProject } from '../../src/modules/account/projects/projects.service.js';
import type { Tenant } from '../helpers/api.js';
import { startReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';
import { startLiveWorld, verifiedDomain, waitEmail, type LiveWorld } from '../helpers/live.js';
import { smtpSend } from '../helpers/smtp-client.js';
import { SmtpSession } from '../helpers/smtp-pipelined.js';
import { expectError } from '../helpers/assert.js';
import { DATABASE_KINDS } from '../helpers/databases.js';
import { waitFor } from '../helpers/wait.js';
import { arfReport, autoReply, deliveryStatus, plainMessage } from '../fixtures/report-builders.js';

let n = 0;
const uid = (p: string) => `${p}-${Date.now().toString(36)}-${++n}`;

for (const kind of DATABASE_KINDS) {
  describe(`inbound SMTP: bounces, complaints, auto-replies and received mail (issue 21) [${kind}]${kind === 'pg' ? ' @pg' : ''}`, function () {
    this.timeout(60_000);
    let w: LiveWorld;
    let hooks: HttpsReceiver;
    let t: Tenant;
    let from: string;
    let domain: string;
    let port: number;
    let events: string;

    before(async function () {
      hooks = await startReceiver();
      w = await startLiveWorld(
        'dkim.inbound.test',
        'mta.inbound.test',
        {
          smtp: { inbound: { host: '127.0.0.1', port: 0 }, submission: { enabled: false } },
          network: { allow_private: true },
          webhooks: { ca_file: hooks.caFile, retry_schedule: ['0s', '1s', '1s'] },
        },
        { inbound: true, webhooks: true },
        kind,
      );
      w.world.add('hooks.test', 'A', '127.0.0.1');
      port = w.api.running.inboundPort!;
      t = await w.api.tenant({ mode: 'live' });
      domain = (await verifiedDomain(t, w.world)).domain;
      from = `shop@${domain}`;
      const hook = await t.api.post('/v1/webhooks', { url: hooks.url(`/all/${uid('h')}`) });
      events = new URL(hook.body.url).pathname;
    });
    after(async function () {
      await w.stop();
      await hooks.stop();
    });

    /** A live email delivered to the sink, and the envelope sender (VERP) it went out with. */
    async function delivered(to = `${uid('r')}@ok.test`) {
      const res = await t.api.post('/v1/emails', { from, to: [to], subject: 'Order shipped', text: 'x' });
      expect(res.status, res.text).to.equal(202);
      const msg = await waitFor(async () => w.sink.messagesTo(to)[0] ?? null, 15_000, 'the message at the sink');
      await waitEmail(t.api, res.body.id, (e) => e.recipients?.[0]?.status === 'delivered');
      return { id: res.body.id as string, to, verp: msg.envelope.from, raw: msg.raw.toString('utf8') };
    }

    /** whether a new send to the address is refused as suppressed (422) */
    const suppressed = async (address: string) =>
      (await t.api.post('/v1/emails', { from, to: [address], subject: 'again', text: 'x' })).status === 422;
    /** the webhook event of that type about the email */
    const eventOf = (emailId: string, type: string) =>
      waitFor(
        async () => hooks.to(events).find((x) => x.json.type === type && x.json.data.email_id === emailId) ?? null,
        15_000,
        `${type} of ${emailId}`,
      );

    it('sends live mail with a VERP envelope sender naming the email and the recipient, at the return-path subdomain once its MX is found', async function () {
      const e = await delivered();
      expect(e.verp).to.match(/^bounce\+[0-9a-z]{26}-[0-9a-z]{26}@/);
      expect(e.verp.split('@')[1]).to.equal(`send.${domain}`);
      expect(e.verp).to.include(e.id.slice(4));
    });

    it('a DSN saying 5.1.1 user unknown marks the recipient bounced (Permanent, user_unknown) and suppresses the address', async function () {
      const e = await delivered();
      const r = await smtpSend(port, {
        from: '',
        to: [e.verp],
        raw: deliveryStatus({
          to: e.verp,
          recipient: e.to,
          status: '5.1.1',
          diagnostic: 'smtp; 550 5.1.1 <' + e.to + '>: Recipient address rejected: User unknown',
          original: e.raw,
        }),
      });
      expect(r.ok, JSON.stringify(r)).to.equal(true);
      await waitEmail(t.api, e.id, (x) => x.recipients[0].status === 'bounced');
      const ev = await eventOf(e.id, 'email.bounced');
      expect(ev.json.data.details).to.include({
        bounce_type: 'Permanent',
        reason: 'user_unknown',
        status: '5.1.1',
        reporting_mta: 'mx.isp.test',
      });
      expect(ev.json.data.recipient).to.equal(e.to);
      expect(await suppressed(e.to)).to.equal(true);
      // the suppression the bounce made is the one the API lists and removes
      const listed = await t.api.get(`/v1/suppressions?email=${encodeURIComponent(e.to)}`);
      expect(listed.body.data).to.have.length(1);
      expect(listed.body.data[0]).to.include({ email: e.to, reason: 'bounce' });
    });

    it("ends a hard bounce's suppression after the project's bounce_suppression_days, and never a complaint's", async function () {
      await setProject(w.api.deps, t.project.id, { bounceSuppressionDays: 30 });
      try {
        const e = await delivered();
        const r = await smtpSend(port, {
          from: '',
          to: [e.verp],
          raw: deliveryStatus({
            to: e.verp,
            recipient: e.to,
            status: '5.1.1',
            diagnostic: 'smtp; 550 5.1.1 User unknown',
            original: e.raw,
          }),
        });
        expect(r.ok, JSON.stringify(r)).to.equal(true);
        await waitEmail(t.api, e.id, (x) => x.recipients[0].status === 'bounced');
        const listed = (await t.api.get(`/v1/suppressions?email=${encodeURIComponent(e.to)}`)).body.data[0];
        expect(listed).to.include({ email: e.to, reason: 'bounce' });
        expect(Date.parse(listed.expires_at) - Date.parse(listed.created_at)).to.equal(30 * 86_400_000);
        expect(await suppressed(e.to)).to.equal(true);

        const c = await delivered();
        expect(
          (
            await smtpSend(port, {
              from: '',
              to: [c.verp],
              raw: arfReport({ to: c.verp, recipient: c.to, original: c.raw }),
            })
          ).ok,
        ).to.equal(true);
        await waitEmail(t.api, c.id, (x) => x.recipients[0].status === 'complained');
        expect((await t.api.get(`/v1/suppressions?email=${encodeURIComponent(c.to)}`)).body.data[0]).to.include({
          reason: 'complaint',
          expires_at: null,
        });
      } finally {
        await setProject(w.api.deps, t.project.id, { bounceSuppressionDays: 0 });
      }
    });

    it('a DSN saying the sending IP is on a blocklist marks the recipient bounced (Transient, blocked) and does not suppress', async function () {
      const e = await delivered();
      const r = await smtpSend(port, {
        from: '',
        to: [e.verp],
        raw: deliveryStatus({
          to: e.verp,
          recipient: e.to,
          status: '5.7.1',
          diagnostic: 'smtp; 554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org',
          original: e.raw,
        }),
      });
      expect(r.ok, JSON.stringify(r)).to.equal(true);
      await waitEmail(t.api, e.id, (x) => x.recipients[0].status === 'bounced');
      expect((await eventOf(e.id, 'email.bounced')).json.data.details).to.include({
        bounce_type: 'Transient',
        reason: 'blocked',
        status: '5.7.1',
      });
      expect(await suppressed(e.to)).to.equal(false);
    });

    it('a delivery refused with a blocklist reply is bounced (Transient, blocked) without suppressing; an unknown user is Permanent and suppressed', async function () {
      const blocked = `${uid('b')}@blocklist.test`;
      const gone = `${uid('g')}@reject.test`;
      const res = await t.api.post('/v1/emails', { from, to: [blocked, gone], subject: 'Two refusals', text: 'x' });
      expect(res.status, res.text).to.equal(202);
      await waitEmail(t.api, res.body.id, (x) => x.recipients.every((r: { status: string }) => r.status === 'bounced'));
      const details = async (address: string) =>
        (
          await waitFor(
            async () =>
              hooks.to(events).find((x) => x.json.type === 'email.bounced' && x.json.data.recipient === address) ??
              null,
            15_000,
            `email.bounced for ${address}`,
          )
        ).json.data.details;
      expect(await details(blocked)).to.include({ bounce_type: 'Transient', reason: 'blocked', status: '5.7.1' });
      expect(await details(gone)).to.include({ bounce_type: 'Permanent', reason: 'user_unknown', status: '5.1.1' });
      expect(await suppressed(blocked)).to.equal(false);
      expect(await suppressed(gone)).to.equal(true);
    });

    it('a bounce sent to postmaster@ without VERP is matched by the original Message-ID', async function () {
      const e = await delivered();
      const r = await smtpSend(port, {
        from: '',
        to: ['postmaster@mta.inbound.test'],
        raw: deliveryStatus({
          to: 'postmaster@mta.inbound.test',
          recipient: e.to,
          status: '5.1.1',
          diagnostic: 'smtp; 550 5.1.1 no such user',
          original: e.raw,
        }),
      });
      expect(r.ok, JSON.stringify(r)).to.equal(true);
      await waitEmail(t.api, e.id, (x) => x.recipients[0].status === 'bounced');
    });

    it('an ARF report marks the recipient complained, suppresses it and emits email.complained with the feedback type', async function () {
      const e = await delivered();
      const r = await smtpSend(port, {
        from: 'fbl@isp.test',
        to: [e.verp],
        raw: arfReport({ to: e.verp, recipient: e.to, original: e.raw }),
      });
      expect(r.ok, JSON.stringify(r)).to.equal(true);
      await waitEmail(t.api, e.id, (x) => x.recipients[0].status === 'complained');
      expect(await suppressed(e.to)).to.equal(true);
      expect((await t.api.get(`/v1/suppressions?email=${encodeURIComponent(e.to)}`)).body.data[0]).to.include({
        email: e.to,
        reason: 'complaint',
      });
      const ev = await eventOf(e.id, 'email.complained');
      expect(ev.json.data.details).to.include({ feedback_type: 'abuse', user_agent: 'SomeISP FBL/1.0' });
    });

    it('an out-of-office reply to the return path changes nothing', async function () {
      const e = await delivered();
      const r = await smtpSend(port, { from: e.to, to: [e.verp], raw: autoReply({ from: e.to, to: e.verp }) });
      expect(r.ok, JSON.stringify(r)).to.equal(true);
      // the listener answers once what it read is committed: nothing changed by then is nothing changed
      const now = (await t.api.get(`/v1/emails/${e.id}`)).body;
      expect(now.recipients[0].status).to.equal('delivered');
      expect(r.ok && r.response).to.include('report accepted');
      expect(await suppressed(e.to)).to.equal(false);
    });

    it('refuses at RCPT, with 550 5.7.1, mail for a domain it does not receive for and VERP addresses on other hosts', async function () {
      for (const to of [
        'someone@elsewhere.test',
        `bounce+${'0'.repeat(26)}@elsewhere.test`,
        'nobody@mta.inbound.test',
      ]) {
        const r = await smtpSend(port, {
          from: 'x@client.test',
          to: [to],
          raw: plainMessage({ from: 'x@client.test', to, subject: 'relay?' }),
        });
        expect(r.ok, to).to.equal(false);
        if (!r.ok)
          expect([r.code, r.command, r.response]).to.satisfy(
            ([code, cmd, resp]: [number, string, string]) =>
              code === 550 && cmd === 'RCPT TO' && resp.includes('5.7.1'),
          );
      }
    });

    it('answers a client that pipelines (RFC 2920) one reply per command, in order, refusals included', async function () {
      const session = await SmtpSession.open(port);
      try {
        const replies = await session.commands([
          'MAIL FROM:<x@client.test>',
          'RCPT TO:<someone@elsewhere.test>',
          'RCPT TO:<postmaster@mta.inbound.test>',
          'DATA',
        ]);
        expect(replies.map((r) => r.slice(0, 3))).to.deep.equal(['250', '550', '250', '354']);
        expect(replies[1]).to.include('5.7.1');
        expect(await session.data(autoReply({ from: 'x@client.test', to: 'postmaster@mta.inbound.test' }))).to.match(
          /^250 /,
        );
        // the same connection takes the next message
        expect(
          await session.send(
            'x@client.test',
            ['postmaster@mta.inbound.test'],
            autoReply({ from: 'x@client.test', to: 'postmaster@mta.inbound.test' }),
          ),
        ).to.match(/^250 /);
      } finally {
        await session.close();
      }
    });

    it('looks up no client name by default: the greeting names the client by its address', async function () {
      const session = await SmtpSession.open(port);
      await session.close();
      expect(session.ehlo.split('\n')[0]).to.match(/Nice to meet you, \[127\.0\.0\.1\]$/);
    });

    it('mail to a verified domain is stored, announced only to the endpoint that subscribed to email.received, and can be fetched', async function () {
      const subscribed = await t.api.post('/v1/webhooks', {
        url: hooks.url(`/rx/${uid('yes')}`),
        events: ['email.received'],
      });
      const other = await t.api.post('/v1/webhooks', { url: hooks.url(`/rx/${uid('no')}`) });
      const to = `support@${domain}`;
      const subject = uid('Question');
      const raw = plainMessage({
        from: 'Ann <ann@client.test>',
        to,
        subject,
        text: 'Where is my order?',
        attachment: { filename: 'note.txt', content: 'attached words' },
      });
      const r = await smtpSend(port, { from: 'ann@client.test', to: [to], raw });
      expect(r.ok, JSON.stringify(r)).to.equal(true);
      const ev = await waitFor(
        async () => hooks.to(new URL(subscribed.body.url).pathname)[0] ?? null,
        15_000,
        'email.received',
      );
      expect(ev.json.type).to.equal('email.received');
      expect(ev.json.data).to.include({ from: '"Ann" <ann@client.test>', subject, environment: 'live' });
      expect(ev.json.data.to).to.deep.equal([to]);
      expect(ev.json.data.attachments).to.deep.equal([{ filename: 'note.txt', content_type: 'text/plain', size: 14 }]);
      expect(JSON.stringify(ev.json)).to.not.include('Where is my order');
      expect(hooks.to(new URL(other.body.url).pathname)).to.have.length(0);

      const id = ev.json.data.inbound_id as string;
      expect(id).to.match(/^inb_/);
      const list = await t.api.get('/v1/inbound');
      expect(list.body.data.map((x: { id: string }) => x.id)).to.include(id);
      const one = await t.api.get(`/v1/inbound/${id}`);
      expect(one.body).to.include({ object: 'inbound_email', subject });
      expect(one.body.text.trim()).to.equal('Where is my order?');
      const rawBack = await t.api.get(`/v1/inbound/${id}/raw`);
      expect(rawBack.headers.get('content-type')).to.equal('message/rfc822');
      expect(rawBack.text).to.equal(raw);
      const file = await t.api.get(`/v1/inbound/${id}/attachments/0`);
      expect(file.text).to.equal('attached words');

      const stranger = await w.api.tenant({ mode: 'live' });
      expect((await stranger.api.get(`/v1/inbound/${id}`)).status).to.equal(404);
      const noScope = await t.newKey({ mode: 'live', scopes: ['emails:send'] });
      expect((await noScope.api.get('/v1/inbound')).status).to.equal(403);
    });

    it('unfolds a received subject: no CR or LF from a folded or encoded subject reaches the API or email.received (RFC 5322 §2.2.3)', async function () {
      const hook = await t.api.post('/v1/webhooks', {
        url: hooks.url(`/rx/${uid('subject')}`),
        events: ['email.received'],
      });
      const to = `subjects@${domain}`;
      const folded = uid('folded');
      const encoded = uid('encoded');
      const subjects = [
        // two encoded words on two header lines, the second one starting with an encoded CRLF and a space
        {
          header: `=?UTF-8?Q?Your_order_${folded}?=\r\n =?UTF-8?Q?=0D=0A_has_shipped?=`,
          expected: `Your order ${folded} has shipped`,
        },
        // "a\r\nb" in base64: the line break is in the decoded text
        { header: `=?UTF-8?B?${Buffer.from(`${encoded} a\r\nb`).toString('base64')}?=`, expected: `${encoded} a b` },
      ];
      for (const s of subjects) {
        const raw = plainMessage({ from: 'ann@client.test', to, subject: s.header, text: 'x' });
        expect((await smtpSend(port, { from: 'ann@client.test', to: [to], raw })).ok).to.equal(true);
      }
      const received = await waitFor(
        async () => {
          const got = hooks.to(new URL(hook.body.url).pathname);
          return got.length === subjects.length
            ? got.map((x) => x.json.data as { inbound_id: string; subject: string })
            : null;
        },
        15_000,
        'two email.received',
      );
      expect(received.map((d) => d.subject)).to.have.members(subjects.map((s) => s.expected));
      for (const d of received)
        expect((await t.api.get(`/v1/inbound/${d.inbound_id}`)).body.subject).to.equal(d.subject);
    });

    it('keeps a received message with a NUL in its subject and body, as U+FFFD (PostgreSQL text cannot hold NUL)', async function () {
      const to = `nul@${domain}`;
      const tag = uid('nul');
      const raw = plainMessage({
        from: 'ann@client.test',
        to,
        subject: `=?UTF-8?B?${Buffer.from(`${tag} a\u0000b`).toString('base64')}?=`,
        text: 'body \u0000 here',
      });
      const r = await smtpSend(port, { from: 'ann@client.test', to: [to], raw });
      expect(r.ok, JSON.stringify(r)).to.equal(true);
      const id = await waitFor(
        async () =>
          ((await t.api.get('/v1/inbound')).body.data as Array<{ id: string; subject: string }>).find((x) =>
            x.subject.startsWith(tag),
          )?.id ?? null,
        15_000,
        'the stored mail',
      );
      const one = (await t.api.get(`/v1/inbound/${id}`)).body;
      expect(one.subject).to.equal(`${tag} a\uFFFDb`);
      expect(one.text.trim()).to.equal('body \uFFFD here');
      expect((await t.api.get(`/v1/inbound/${id}/raw`)).text).to.equal(raw);
    });

    it('serves an attachment whose name is not Latin-1, under its exact name (RFC 6266 filename*)', async function () {
      const to = `files@${domain}`;
      const subject = uid('Files');
      const raw = plainMessage({
        from: 'ann@client.test',
        to,
        subject,
        attachment: { filename: 'Lieferschein 報告.txt', content: 'lines' },
      });
      expect((await smtpSend(port, { from: 'ann@client.test', to: [to], raw })).ok).to.equal(true);
      const id = await waitFor(
        async () =>
          ((await t.api.get('/v1/inbound')).body.data as Array<{ id: string; subject: string }>).find(
            (x) => x.subject === subject,
          )?.id ?? null,
        15_000,
        'the stored mail',
      );
      const file = await t.api.get(`/v1/inbound/${id}/attachments/0`);
      expect(file.status).to.equal(200);
      expect(file.text).to.equal('lines');
      expect(file.headers.get('content-disposition')).to.equal(
        `attachment; filename="Lieferschein __.txt"; filename*=UTF-8''Lieferschein%20%E5%A0%B1%E5%91%8A.txt`,
      );
    });

    it('the /v1/inbound routes refuse what they cannot answer, in the CONTRACT error shape', async function () {
      expectError(await w.api.anonymous.get('/v1/inbound'), 401, 'unauthorized');
      expectError(await t.api.get('/v1/inbound?colour=blue'), 400, 'validation_error', 'colour');
      expectError(await t.api.get('/v1/inbound?limit=0'), 400, 'validation_error', 'limit');
      expectError(await t.api.get('/v1/inbound?cursor=msg_01'), 400, 'validation_error', 'cursor');
      const missing = `inb_${'0'.repeat(26)}`;
      for (const path of [
        `/v1/inbound/${missing}`,
        `/v1/inbound/${missing}/raw`,
        `/v1/inbound/${missing}/attachments/0`,
      ])
        expectError(await t.api.get(path), 404, 'not_found');
      const to = `files@${domain}`;
      expect(
        (
          await smtpSend(port, {
            from: 'b@client.test',
            to: [to],
            raw: plainMessage({ from: 'b@client.test', to, subject: 'no files' }),
          })
        ).ok,
      ).to.equal(true);
      const id = (await t.api.get('/v1/inbound?limit=1')).body.data[0].id as string;
      expectError(await t.api.get(`/v1/inbound/${id}/attachments/abc`), 400, 'validation_error', 'index');
      expectError(await t.api.get(`/v1/inbound/${id}/attachments/0`), 404, 'not_found');
    });
  });
}
