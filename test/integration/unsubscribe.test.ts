import { expect } from 'chai';
import type { Tenant } from '../helpers/api.js';
import { DATABASE_KINDS } from '../helpers/databases.js';
import { dkimResults, startLiveWorld, verifiedDomain, waitEmail, type LiveWorld } from '../helpers/live.js';
import { smtpSend } from '../helpers/smtp-client.js';
import { expectError } from '../helpers/assert.js';

const PUBLIC = 'https://mail.unsub.test';

/** A header of a raw message, unfolded. */
function header(raw: Buffer, name: string): string | null {
  const head = raw
    .toString('latin1')
    .split('\r\n\r\n')[0]
    .replace(/\r\n[ \t]+/g, ' ');
  const line = head.split('\r\n').find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line ? line.slice(name.length + 1).trim() : null;
}

for (const kind of DATABASE_KINDS) {
  describe(`one-click unsubscribe (RFC 8058) [${kind}]${kind === 'pg' ? ' @pg' : ''}`, function () {
    this.timeout(60_000);
    let w: LiveWorld;
    let t: Tenant;
    let port: number;
    let domain: { id: string; domain: string };
    const local = (url: string) => url.replace(PUBLIC, w.api.baseUrl);

    before(async function () {
      w = await startLiveWorld(
        'dkim.unsub.test',
        'mta.unsub.test',
        {
          http: { public_url: PUBLIC },
          smtp: { inbound: { host: '127.0.0.1', port: 0 }, submission: { enabled: false } },
        },
        { inbound: true },
        kind,
      );
      port = w.api.running.inboundPort!;
      t = await w.api.tenant({ mode: 'live' });
      domain = await verifiedDomain(t, w.world);
    });
    after(async function () {
      await w.stop();
    });

    const send = async (to: string[], headers?: Record<string, string>) => {
      const res = await t.api.post('/v1/emails', {
        from: `news@${domain.domain}`,
        to,
        subject: 'Our news',
        text: 'News',
        ...(headers ? { headers } : {}),
      });
      return res;
    };
    const suppressionOf = async (address: string) =>
      (await t.api.get(`/v1/suppressions?email=${encodeURIComponent(address)}`)).body.data.find(
        (s: { email: string }) => s.email === address,
      ) ?? null;

    it('adds each recipient’s own links, signed by DKIM; a GET shows a page and changes nothing, a POST unsubscribes once', async function () {
      const [reader, friend] = [`reader-${kind}@ok.test`, `friend-${kind}@ok.test`];
      const res = await send([reader, friend], { 'List-Unsubscribe': '<auto>' });
      expect(res.status, res.text).to.equal(202);
      const [a, b] = await Promise.all([w.sink.waitForMessage(reader), w.sink.waitForMessage(friend)]);
      const lu = header(a.raw, 'List-Unsubscribe')!;
      const m =
        /^<(https:\/\/mail\.unsub\.test\/u\/([0-9a-z-]+))>, <mailto:(unsubscribe\+([0-9a-z-]+)@send\.[^?]+)\?subject=unsubscribe>$/.exec(
          lu,
        );
      expect(m, lu).to.not.equal(null);
      const [, url, token, mailto, mailToken] = m!;
      expect(mailToken).to.equal(token);
      expect(mailto).to.equal(`unsubscribe+${token}@send.${domain.domain}`);
      expect(header(a.raw, 'List-Unsubscribe-Post')).to.equal('List-Unsubscribe=One-Click');
      expect(header(b.raw, 'List-Unsubscribe')).to.not.equal(lu);
      // RFC 8058 §4: both headers are covered by the DKIM signature, and it verifies
      expect(header(a.raw, 'DKIM-Signature')!.replace(/\s+/g, '')).to.match(
        /h=[^;]*list-unsubscribe:list-unsubscribe-post/,
      );
      expect(await dkimResults(w.world, a.raw)).to.deep.equal([`${domain.domain}:pass`]);

      const page = await fetch(local(url));
      expect(page.status).to.equal(200);
      expect(page.headers.get('content-security-policy')).to.include("default-src 'none'");
      const html = await page.text();
      expect(html)
        .to.include('Unsubscribe?')
        .and.include(domain.domain)
        .and.include('<form method="post">')
        .and.not.include(reader);
      expect(await suppressionOf(reader), 'a GET unsubscribes nobody').to.equal(null);

      const post = () =>
        fetch(local(url), {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'List-Unsubscribe=One-Click',
        });
      const first = await post();
      expect(first.status).to.equal(200);
      expect(await first.text()).to.include('You are unsubscribed');
      expect(await suppressionOf(reader)).to.include({ email: reader, reason: 'unsubscribe' });
      expect((await post()).status, 'idempotent').to.equal(200);
      const events = (await t.api.get(`/v1/emails/${res.body.id}/events`)).body.data.filter(
        (e: { type: string }) => e.type === 'email.unsubscribed',
      );
      expect(events).to.have.length(1);
      expect(events[0]).to.include({ recipient: reader });
      expect(events[0].data.details).to.deep.equal({ method: 'one_click' });
      expect(await suppressionOf(friend)).to.equal(null);
    });

    it('stops the next newsletter to that address but not a receipt, and a bounce later stops all mail', async function () {
      const reader = `reader-${kind}@ok.test`;
      expectError(await send([reader], { 'List-Unsubscribe': '<auto>' }), 422, 'recipient_suppressed');
      expectError(
        await send([reader], { 'List-Unsubscribe': '<https://news.example/unsub>' }),
        422,
        'recipient_suppressed',
      );
      const receipt = await send([reader]);
      expect(receipt.status, receipt.text).to.equal(202);
      await waitEmail(t.api, receipt.body.id, (e) => e.recipients?.[0]?.status === 'delivered');
      // the operator suppresses the address for all mail: the stronger reason takes its place
      expect((await t.api.post('/v1/suppressions', { email: reader })).status).to.equal(201);
      expect(await suppressionOf(reader)).to.include({ reason: 'manual' });
      expectError(await send([reader]), 422, 'recipient_suppressed');
    });

    it('unsubscribes by mail to the mailto address, and refuses tokens that are not its own', async function () {
      const friend = `friend-${kind}@ok.test`;
      const raw = w.sink.messagesTo(friend)[0].raw;
      const mailto = /<mailto:([^?]+)\?/.exec(header(raw, 'List-Unsubscribe')!)![1];
      const sent = await smtpSend(port, {
        from: friend,
        to: [mailto],
        raw: `From: ${friend}\r\nTo: ${mailto}\r\nSubject: unsubscribe\r\n\r\nunsubscribe\r\n`,
      });
      expect(sent.ok, JSON.stringify(sent)).to.equal(true);
      expect(await suppressionOf(friend)).to.include({ reason: 'unsubscribe' });

      const forged = mailto.replace(/-[0-9a-f]{20}@/, '-0123456789abcdef0123@');
      const refused = await smtpSend(port, {
        from: friend,
        to: [forged],
        raw: `From: ${friend}\r\nSubject: unsubscribe\r\n\r\nx\r\n`,
      });
      expect(refused.ok).to.equal(false);
      const bad = `${w.api.baseUrl}/u/${forged.slice('unsubscribe+'.length, forged.indexOf('@'))}`;
      expect((await fetch(bad)).status).to.equal(404);
      expect((await fetch(bad, { method: 'POST', body: 'List-Unsubscribe=One-Click' })).status).to.equal(404);
      expect((await fetch(bad, { method: 'DELETE' })).status).to.equal(405);
    });

    it('an unsubscription outlives a suppression that replaced it and ended', async function () {
      const friend = `friend-${kind}@ok.test`;
      expect(await suppressionOf(friend)).to.include({ reason: 'unsubscribe' });
      // a bounce imported for a short while stops all mail, and takes the unsubscription's place
      const until = new Date(Date.now() + 1500).toISOString();
      expect(
        (await t.api.post('/v1/suppressions', { email: friend, reason: 'bounce', expires_at: until })).status,
      ).to.equal(201);
      expect(await suppressionOf(friend)).to.include({ reason: 'bounce' });
      expectError(await send([friend]), 422, 'recipient_suppressed');
      await new Promise((r) => setTimeout(r, 1600));
      // once it ends, the newsletter is still stopped and the receipt goes
      expect(await suppressionOf(friend)).to.include({ reason: 'unsubscribe', expires_at: null });
      expectError(await send([friend], { 'List-Unsubscribe': '<auto>' }), 422, 'recipient_suppressed');
      expect((await send([friend])).status).to.equal(202);
      const pruned = await w.api.core.services.suppressions.pruneExpired();
      expect(pruned).to.be.at.least(1);
      expect(await suppressionOf(friend)).to.include({ reason: 'unsubscribe' });
      expectError(await send([friend], { 'List-Unsubscribe': '<auto>' }), 422, 'recipient_suppressed');
    });

    it('leaves unsubscribe+ at a verified domain to received mail, and refuses an oversized POST', async function () {
      const to = `unsubscribe+hello@${domain.domain}`;
      const sent = await smtpSend(port, {
        from: 'a@example.net',
        to: [to],
        raw: `From: a@example.net\r\nTo: ${to}\r\nSubject: hi\r\n\r\nhi\r\n`,
      });
      expect(sent.ok, JSON.stringify(sent)).to.equal(true);
      if (sent.ok) expect(sent.response).to.match(/received as inb_/);
      const big = await fetch(`${w.api.baseUrl}/u/whatever-0123`, { method: 'POST', body: 'x'.repeat(10_000) });
      expect(big.status).to.equal(413);
    });

    it('a link keeps working after retention deleted its email', async function () {
      const to = `late-${kind}@ok.test`;
      const res = await send([to], { 'List-Unsubscribe': '<auto>' });
      const url = /<(https:[^>]+)>/.exec(header((await w.sink.waitForMessage(to)).raw, 'List-Unsubscribe')!)![1];
      await waitEmail(t.api, res.body.id, (e) => e.recipients?.[0]?.status === 'delivered');
      // read five weeks later: the email is older than retention.days (30) and the retention job deletes it
      const old = Date.now() - 35 * 86_400_000;
      const knex = w.db.store.knex;
      await knex('emails').where({ id: res.body.id }).update({ created_at: old, updated_at: old });
      await knex('email_recipients').where({ email_id: res.body.id }).update({ updated_at: old });
      await knex('events').where({ email_id: res.body.id }).update({ created_at: old });
      await w.api.core.services.retention.prune();
      expectError(await t.api.get(`/v1/emails/${res.body.id}`), 404, 'not_found');
      expect((await fetch(local(url))).status).to.equal(200);
      const post = await fetch(local(url), { method: 'POST', body: 'List-Unsubscribe=One-Click' });
      expect(post.status).to.equal(200);
      expect(await suppressionOf(to)).to.include({ reason: 'unsubscribe' });
      expectError(await send([to], { 'List-Unsubscribe': '<auto>' }), 422, 'recipient_suppressed');
    });

    it('a domain set to ask for it adds the links to every send from it', async function () {
      const patched = await t.api.patch(`/v1/domains/${domain.id}`, { list_unsubscribe: true });
      expect(patched.body.list_unsubscribe).to.equal(true);
      const to = `plain-${kind}@ok.test`;
      expect((await send([to])).status).to.equal(202);
      const raw = (await w.sink.waitForMessage(to)).raw;
      expect(header(raw, 'List-Unsubscribe')).to.match(
        /^<https:\/\/mail\.unsub\.test\/u\/[0-9a-z-]+>, <mailto:unsubscribe\+/,
      );
      expect(await dkimResults(w.world, raw)).to.deep.equal([`${domain.domain}:pass`]);
      await t.api.patch(`/v1/domains/${domain.id}`, { list_unsubscribe: false });
    });
  });
}
