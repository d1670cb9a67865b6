import { expect } from 'chai';
import type { Tenant } from '../helpers/api.js';
import { client } from '../helpers/http.js';
import {
  dkimResults,
  routeSinkDomains,
  startLiveWorld,
  verifiedDomain,
  waitEmail,
  type LiveWorld,
} from '../helpers/live.js';
import { startDnsWorld } from '../helpers/dns-world.js';
import { startSink } from '../helpers/smtp-sink.js';
import { runCli, startServe, writeConfig } from '../helpers/process.js';
import { waitFor } from '../helpers/wait.js';
import { audienceOf, copies, sentOf } from '../helpers/audience.js';
import { expectError } from '../helpers/assert.js';
import { setProject } from '../../src/modules/account/projects/projects.service.js';
import { smtpSend } from '../helpers/smtp-client.js';
import { arfReport } from '../fixtures/report-builders.js';

const PUBLIC = 'https://mail.broadcast.test';

/** A header of a raw message, unfolded. */
function header(raw: Buffer, name: string): string | null {
  const head = raw
    .toString('latin1')
    .split('\r\n\r\n')[0]
    .replace(/\r\n[ \t]+/g, ' ');
  const line = head.split('\r\n').find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line ? line.slice(name.length + 1).trim() : null;
}

describe('a broadcast to 1,000 live contacts (issue 27)', function () {
  this.timeout(120_000);
  let w: LiveWorld;
  let t: Tenant;
  let domain: { id: string; domain: string };

  before(async function () {
    w = await startLiveWorld(
      'dkim.broadcast.test',
      'mta.broadcast.test',
      {
        http: { public_url: PUBLIC },
        broadcasts: { max_per_second: 5000 },
        smtp: { inbound: { host: '127.0.0.1', port: 0 }, submission: { enabled: false } },
      },
      { jobs: true, inbound: true },
    );
    t = await w.api.tenant({ mode: 'live' });
    domain = await verifiedDomain(t, w.world);
  });
  after(async function () {
    await w.stop();
  });

  it('reaches each contact once, DKIM-signed, with its own content and a one-click header; one unsubscription stops the next broadcast to it and no receipt', async function () {
    const audience = await audienceOf(t.api, 'live', 1000);
    const topic = (await t.api.post('/v1/topics', { name: 'Newsletter', default: 'opt_out' })).body.id;
    const body = {
      name: 'Issue 1',
      from: `News <news@${domain.domain}>`,
      subject: 'News for {{contact.first_name | there}}',
      html: '<p>Dear {{contact.first_name}},</p><p><a href="{{preferences_url}}">Your preferences</a></p>',
      audience_id: audience,
      topic_id: topic,
    };
    const first = (await t.api.post('/v1/broadcasts', body)).body;
    expect((await t.api.post(`/v1/broadcasts/${first.id}/send`, {})).body.environment).to.equal('live');
    await waitFor(async () => w.sink.messages.length >= 1000, 90_000, '1,000 messages at the sink');
    const done = await sentOf(t.api, first.id, 30_000);
    expect(done.counts).to.include({ recipients: 1000, sent: 1000, skipped: 0, suppressed: 0, failed: 0 });
    const got = copies(w.sink.messages);
    const missingOrTwice = Array.from({ length: 1000 }, (_, i) => `c${i}-live@ok.test`).filter((a) => got.get(a) !== 1);
    expect(missingOrTwice, 'each contact exactly one message').to.deep.equal([]);

    for (const i of [0, 7, 499, 999]) {
      const m = w.sink.messagesTo(`c${i}-live@ok.test`)[0];
      expect(header(m.raw, 'Subject')).to.equal(`News for N${i}`);
      expect(m.raw.toString('latin1').replace(/=\r\n/g, ''))
        .to.include(`Dear N${i},`)
        .and.match(/https:\/\/mail\.broadcast\.test\/p\/[0-9a-z]{26}-[0-9a-f]{20}/);
      expect(header(m.raw, 'List-Unsubscribe')).to.match(
        /^<https:\/\/mail\.broadcast\.test\/u\/[0-9a-z-]+>, <mailto:unsubscribe\+[0-9a-z-]+@[^>]+>$/,
      );
      expect(header(m.raw, 'List-Unsubscribe-Post')).to.equal('List-Unsubscribe=One-Click');
      expect(header(m.raw, 'DKIM-Signature')!.replace(/\s+/g, '')).to.match(
        /h=[^;]*list-unsubscribe:list-unsubscribe-post/,
      );
      expect(await dkimResults(w.world, m.raw)).to.deep.equal([`${domain.domain}:pass`]);
    }

    // the link in the content opens the contact's own preference page, with the broadcast's topic on it
    const prefs = /https:\/\/mail\.broadcast\.test\/p\/[0-9a-z]{26}-[0-9a-f]{20}/.exec(
      w.sink.messagesTo('c3-live@ok.test')[0].raw.toString('latin1').replace(/=\r\n/g, ''),
    )![0];
    const page = await fetch(prefs.replace(PUBLIC, w.api.baseUrl));
    expect(page.status).to.equal(200);
    expect(await page.text()).to.include('Newsletter');

    // contact 7 presses its mail client's unsubscribe button: it leaves the topic, no address is suppressed
    const seven = w.sink.messagesTo('c7-live@ok.test')[0];
    const url = /^<([^>]+)>/.exec(header(seven.raw, 'List-Unsubscribe')!)![1].replace(PUBLIC, w.api.baseUrl);
    const post = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(post.status).to.equal(200);
    const contact = (await t.api.get('/v1/contacts/c7-live@ok.test')).body;
    expect(contact.topics[topic]).to.equal(false);
    expect(contact.unsubscribed).to.equal(false);
    expect((await t.api.get('/v1/suppressions?email=c7-live%40ok.test')).body.data).to.deep.equal([]);
    const afterFirst = (await t.api.get(`/v1/broadcasts/${first.id}`)).body;
    expect(afterFirst.counts.unsubscribed).to.equal(1);

    // contact 11 reports the newsletter as spam: it leaves all broadcast mail, its address is not suppressed
    const eleven = w.sink.messagesTo('c11-live@ok.test')[0];
    const verp = eleven.envelope.from;
    const complaint = await smtpSend(w.api.running.inboundPort!, {
      from: 'fbl@isp.test',
      to: [verp],
      raw: arfReport({ to: verp, recipient: 'c11-live@ok.test', original: eleven.raw.toString('latin1') }),
    });
    expect(complaint.ok, JSON.stringify(complaint)).to.equal(true);
    await waitFor(
      async () => (await t.api.get('/v1/contacts/c11-live@ok.test')).body.unsubscribed === true,
      10_000,
      'contact 11 unsubscribed by its complaint',
    );
    expect((await t.api.get('/v1/suppressions?email=c11-live%40ok.test')).body.data).to.deep.equal([]);
    await waitFor(
      async () => (await t.api.get(`/v1/broadcasts/${first.id}`)).body.counts.complained === 1,
      10_000,
      'the complaint counted',
    );

    w.sink.messages.length = 0;
    const second = (await t.api.post('/v1/broadcasts', { ...body, name: 'Issue 2' })).body;
    await t.api.post(`/v1/broadcasts/${second.id}/send`, {});
    const done2 = await sentOf(t.api, second.id, 60_000);
    expect(done2.counts).to.include({ recipients: 1000, sent: 998, skipped: 2 });
    await waitFor(async () => w.sink.messages.length >= 998, 60_000, '998 messages at the sink');
    expect(w.sink.messagesTo('c7-live@ok.test')).to.have.length(0);
    expect(w.sink.messagesTo('c11-live@ok.test')).to.have.length(0);

    // the person's receipts still arrive, and so does mail that asks for List-Unsubscribe of its own
    for (const headers of [{}, { 'List-Unsubscribe': '<auto>' }]) {
      const receipt = await t.api.post('/v1/emails', {
        from: `shop@${domain.domain}`,
        to: ['c7-live@ok.test'],
        subject: 'Your receipt',
        text: 'Thanks',
        headers,
      });
      expect(receipt.status, receipt.text).to.equal(202);
      await waitEmail(t.api, receipt.body.id, (e) => e.recipients[0].status === 'delivered');
    }
    expect(w.sink.messagesTo('c7-live@ok.test')).to.have.length(2);
    const receipt = await t.api.post('/v1/emails', {
      from: `shop@${domain.domain}`,
      to: ['c11-live@ok.test'],
      subject: 'Your receipt',
      text: 'Thanks',
    });
    await waitEmail(t.api, receipt.body.id, (e) => e.recipients[0].status === 'delivered');

    // usage and insights show the two streams apart
    const usage = (await t.api.get('/v1/usage')).body;
    expect(usage).to.include({ sent_today: 2001, broadcast_today: 1998, broadcast_this_month: 1998 });
    const insights = (await t.api.get(`/v1/domains/${domain.id}/insights`)).body;
    expect(insights.totals.messages).to.equal(2001);
    expect(insights.streams.broadcast.totals).to.include({ messages: 1998, delivered: 1998, complained: 1 });
    expect(insights.streams.transactional.totals).to.include({ messages: 3, delivered: 3, complained: 0 });
  });
});

describe("a broadcast keeps the project's limits for transactional mail (issue 27)", function () {
  this.timeout(60_000);
  let w: LiveWorld;
  before(async function () {
    w = await startLiveWorld(
      'dkim.limits.test',
      'mta.limits.test',
      { broadcasts: { max_per_second: 1000 } },
      { jobs: true },
    );
  });
  after(async function () {
    await w.stop();
  });

  it('stops at 90% of the daily limit, paused and saying why, while a receipt still goes out; approval revoked pauses it too', async function () {
    const t = await w.api.tenant({ mode: 'live' });
    const domain = await verifiedDomain(t, w.world);
    await setProject(w.api.deps, t.project.id, { limits: { daily: 20 } });
    const audience = await audienceOf(t.api, 'limits', 30);
    const b = (
      await t.api.post('/v1/broadcasts', {
        name: 'limited',
        from: `news@${domain.domain}`,
        subject: 'Hi',
        text: 'News',
        audience_id: audience,
      })
    ).body;
    await t.api.post(`/v1/broadcasts/${b.id}/send`, {});
    const paused = await waitFor(
      async () => {
        const x = (await t.api.get(`/v1/broadcasts/${b.id}`)).body;
        return x.last_error?.startsWith('paused:') ? x : null;
      },
      20_000,
      'the broadcast paused',
    );
    expect(paused).to.include({ status: 'sending' });
    expect(paused.counts).to.include({ sent: 18, failed: 0 });
    expect(paused.last_error).to.include('daily limit');
    const receipt = await t.api.post('/v1/emails', {
      from: `shop@${domain.domain}`,
      to: ['buyer@ok.test'],
      subject: 'Receipt',
      text: 'Thanks',
    });
    expect(receipt.status, receipt.text).to.equal(202);
    await waitEmail(t.api, receipt.body.id, (e) => e.recipients[0].status === 'delivered');
    // the 18 sent before the pause arrive (bulk mail may still be on its way when the receipt is in)
    const limited = () => w.sink.messages.filter((m) => m.envelope.to[0].endsWith('-limits@ok.test')).length;
    await waitFor(async () => limited() >= 18, 20_000, "the broadcast's 18 messages at the sink");
    expect(limited()).to.equal(18);

    // an operator revokes the approval of a project whose broadcast is scheduled: it does not go out
    const other = await w.api.tenant({ mode: 'live' });
    const otherDomain = await verifiedDomain(other, w.world);
    const otherAudience = await audienceOf(other.api, 'revoked', 5);
    const later = (
      await other.api.post('/v1/broadcasts', {
        name: 'later',
        from: `news@${otherDomain.domain}`,
        subject: 'Hi',
        text: 'News',
        audience_id: otherAudience,
      })
    ).body;
    await other.api.post(`/v1/broadcasts/${later.id}/send`, {
      scheduled_at: new Date(Date.now() + 1500).toISOString(),
    });
    await setProject(w.api.deps, other.project.id, { approved: false });
    const held = await waitFor(
      async () => {
        const x = (await other.api.get(`/v1/broadcasts/${later.id}`)).body;
        return x.last_error?.startsWith('paused:') ? x : null;
      },
      20_000,
      'the broadcast of the unapproved project paused',
    );
    expect(held.last_error).to.include('approved');
    expect(held.counts.sent).to.equal(0);
    expect(w.sink.messages.filter((m) => m.envelope.to[0].endsWith('-revoked@ok.test'))).to.have.length(0);
  });

  it('a cancel takes back the emails still waiting in the outbound queue: they are never sent', async function () {
    const t = await w.api.tenant({ mode: 'live' });
    const domain = await verifiedDomain(t, w.world);
    const audience = (await t.api.post('/v1/audiences', { name: 'slow' })).body.id;
    // slow.test holds each DATA reply 300 ms over at most 5 sessions: the queue drains slowly
    const emails = Array.from({ length: 150 }, (_, i) => `hold300-w${i}@slow.test`);
    for (let i = 0; i < emails.length; i += 50) {
      const made = await Promise.all(emails.slice(i, i + 50).map((email) => t.api.post('/v1/contacts', { email })));
      await t.api.post(`/v1/audiences/${audience}/contacts`, { contact_ids: made.map((m) => m.body.id) });
    }
    const b = (
      await t.api.post('/v1/broadcasts', {
        name: 'mistake',
        from: `news@${domain.domain}`,
        subject: 'Wrong',
        text: 'Oops',
        audience_id: audience,
      })
    ).body;
    await t.api.post(`/v1/broadcasts/${b.id}/send`, {});
    await waitFor(
      async () => (await t.api.get(`/v1/broadcasts/${b.id}`)).body.status === 'sent',
      10_000,
      'the fan-out done',
    );
    const cancelled = await t.api.post(`/v1/broadcasts/${b.id}/cancel`, {});
    expect(cancelled.status, cancelled.text).to.equal(200);
    const { withdrawn, sent } = cancelled.body.counts;
    expect(cancelled.body.status).to.equal('cancelled');
    expect(withdrawn, 'emails still queued at the cancel').to.be.greaterThan(0);
    expect(sent + withdrawn).to.equal(150);
    const left = (await w.db.store.knex('emails').where({ broadcast_id: b.id }).count({ n: '*' }).first()) as {
      n: number | string;
    };
    expect(Number(left.n)).to.equal(sent);
    const atSink = () =>
      w.sink.messages.filter((m) => m.envelope.to[0].endsWith('@slow.test') && /^hold300-w/.test(m.envelope.to[0]));
    await waitFor(async () => atSink().length >= sent, 30_000, 'the emails already handed over delivered');
    await new Promise((r) => setTimeout(r, 1000));
    expect(atSink()).to.have.length(sent);
    expectError(await t.api.post(`/v1/broadcasts/${b.id}/cancel`, {}), 409, 'conflict');
  });
});

describe('a broadcast survives kill -9 during its fan-out (issue 27)', function () {
  this.timeout(180_000);

  it('after the restart it goes on where it stopped: every contact gets exactly one email, none is sent twice', async function () {
    const world = await startDnsWorld();
    const sink = await startSink();
    routeSinkDomains(world);
    const base = {
      outbound: { hostname: 'mta.kill.test', mx_port: sink.port },
      dns: { resolvers: [world.address], zone: 'dkim.kill.test' },
      smtp: { inbound: { enabled: false }, submission: { enabled: false } },
      limits: { requests_per_second: 100_000 },
      broadcasts: { max_per_second: 250 },
    };
    const { path } = writeConfig(base);
    let serve = await startServe(path);
    try {
      const project = (await runCli(['project', 'create', '--name', 'kill', '--approved', '--json', '--config', path]))
        .json;
      const key = (
        await runCli(['key', 'create', '--project', project.id, '--mode', 'live', '--json', '--config', path])
      ).json.key as string;
      let api = client(serve.baseUrl, key);
      const domain = await verifiedDomain({ api } as Tenant, world);
      const audience = await audienceOf(api, 'kill', 1000);
      const b = (
        await api.post('/v1/broadcasts', {
          name: 'kill',
          from: `news@${domain.domain}`,
          subject: 'Hi {{contact.first_name}}',
          text: 'Hello',
          audience_id: audience,
        })
      ).body;
      await api.post(`/v1/broadcasts/${b.id}/send`, {});
      await waitFor(
        async () => (await api.get(`/v1/broadcasts/${b.id}`)).body.counts.sent >= 300,
        30_000,
        '300 emails fanned out',
      );
      serve.child.kill('SIGKILL');
      await serve.exited;
      const before = sink.messages.length;
      expect(before, 'killed midway').to.be.below(1000);

      serve = await startServe(path);
      api = client(serve.baseUrl, key);
      const done = await sentOf(api, b.id, 60_000);
      expect(done.counts).to.include({ recipients: 1000, sent: 1000, failed: 0 });
      const emails = (await api.get(`/v1/emails?limit=100`)).body.data as Array<{ status: string }>;
      expect(emails.length).to.be.greaterThan(0);
      // every email the restart found unsure of is `ambiguous` and never sent again by itself
      const ambiguous = new Set<string>();
      let cursor: string | null = null;
      do {
        const page: { data: Array<{ to: string[] }>; next_cursor: string | null } = (
          await api.get(`/v1/emails?limit=100&status=ambiguous${cursor ? `&cursor=${cursor}` : ''}`)
        ).body;
        for (const e of page.data) ambiguous.add(e.to[0]);
        cursor = page.next_cursor;
      } while (cursor);
      await waitFor(
        async () => sink.messages.length + ambiguous.size >= 1000,
        60_000,
        'every contact delivered or ambiguous',
      );
      await new Promise((r) => setTimeout(r, 1500));
      const got = copies(sink.messages);
      const wrong = Array.from({ length: 1000 }, (_, i) => `c${i}-kill@ok.test`).filter(
        (a) => (got.get(a) ?? 0) > 1 || (got.get(a) === undefined && !ambiguous.has(a)),
      );
      expect(wrong, 'contacts sent twice, or skipped').to.deep.equal([]);
      expect(ambiguous.size, 'at most the attempts in flight at the kill').to.be.below(50);
    } finally {
      if (serve.child.exitCode === null && serve.child.signalCode === null) await serve.stop();
      await sink.stop();
      await world.stop();
    }
  });
});
