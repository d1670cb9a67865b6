import { expect } from 'chai';
import { simpleParser } from 'mailparser';
import { freshSqlite, type TestDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { startDnsWorld, type DnsWorld } from '../helpers/dns-world.js';
import { startSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { dkimResults, routeSinkDomains, verifiedDomain, waitEmail } from '../helpers/live.js';
import { expectError } from '../helpers/assert.js';
import { eventsOfEmail } from '../../src/modules/notifying/events/events.repo.js';
import { retryAmbiguous } from '../../src/modules/sending/emails/queue.service.js';

describe('live delivery through the MTA (direct mode, local sink)', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let world: DnsWorld;
  let sink: SmtpSink;
  let api: TestApi;
  let t: Tenant;
  let domain: { id: string; domain: string };
  const from = () => `Shop <orders@${domain.domain}>`;
  const types = async (id: string) => (await eventsOfEmail(api.deps.store.knex, id)).map((e) => e.type);

  before(async function () {
    db = freshSqlite();
    await db.store.migrateLatest();
    world = await startDnsWorld();
    sink = await startSink();
    routeSinkDomains(world);
    api = await startTestApi(
      db.store,
      {
        outbound: { hostname: 'mta.appliance.test', mx_port: sink.port, retry_schedule: ['1s', '1s'] },
        dns: {
          resolvers: [world.address],
          zone: 'dkim.appliance.test',
          server: { enabled: true, host: '127.0.0.1', port: 0 },
        },
      },
      { roles: { mta: true, dns: true } },
    );
    world.delegate('dkim.appliance.test', '127.0.0.1', api.running.dnsPort!);
    t = await api.tenant({ mode: 'live' });
    domain = await verifiedDomain(t, world);
  });
  after(async function () {
    await api.stop();
    await sink.stop();
    await world.stop();
    await db.drop();
  });

  it('delivers a DKIM-signed message that verifies through the CNAME into the built-in DNS zone', async function () {
    const to = `alice-${Date.now()}@ok.test`;
    const res = await t.api.post('/v1/emails', {
      from: from(),
      to: [to],
      subject: 'Your order',
      text: 'plain body',
      html: '<p>html body</p>',
      headers: { 'List-Unsubscribe': '<mailto:unsubscribe@example.test>' },
      attachments: [{ filename: 'receipt.txt', content: Buffer.from('receipt').toString('base64') }],
    });
    expect(res.status, res.text).to.equal(202);
    expect(res.body).to.include({ environment: 'live', simulated: false });
    const msg = await sink.waitForMessage(to);
    expect(await dkimResults(world, msg.raw)).to.deep.equal([`${domain.domain}:pass`]);
    // VERP on the return-path subdomain, whose MX record was found
    expect(msg.envelope.from).to.match(
      new RegExp(`^bounce\\+[0-9a-z]{26}-[0-9a-z]{26}@send\\.${domain.domain.replace(/\./g, '\\.')}$`),
    );
    const parsed = await simpleParser(msg.raw);
    expect(parsed.subject).to.equal('Your order');
    expect(parsed.messageId).to.match(/@mta\.appliance\.test>$/);
    expect(msg.raw.toString()).to.include('List-Unsubscribe: <mailto:unsubscribe@example.test>');
    expect(parsed.attachments.map((a) => a.filename)).to.deep.equal(['receipt.txt']);
    const done = await waitEmail(
      t.api,
      res.body.id,
      (e) => e.status === 'accepted' && e.recipients[0].status === 'delivered',
    );
    expect(done.provider_message_id).to.equal(parsed.messageId);
    expect(done.attempts).to.equal(1);
    expect(await types(res.body.id)).to.deep.equal(['email.sent', 'email.delivered']);
  });

  it('550: the recipient bounces Permanent with the server reply, the email fails, the address is suppressed', async function () {
    const to = `gone-${Date.now()}@reject.test`;
    const res = await t.api.post('/v1/emails', { from: from(), to: [to], subject: 'x', text: 'y' });
    const e = await waitEmail(t.api, res.body.id, (x) => x.status === 'failed');
    expect(e.recipients[0].status).to.equal('bounced');
    const events = await eventsOfEmail(api.deps.store.knex, res.body.id);
    expect(events.map((x) => x.type)).to.deep.equal(['email.bounced', 'email.failed']);
    expect(events[0].data.details).to.include({ bounce_type: 'Permanent' });
    expect((events[0].data.details as { diagnostic: string }).diagnostic).to.match(/^550 5\.1\.1/);
    expectError(
      await t.api.post('/v1/emails', { from: from(), to: [to], subject: 'x', text: 'y' }),
      422,
      'recipient_suppressed',
    );
  });

  it('451 then 250: delivery_delayed once, then delivered on the retry', async function () {
    const to = `tf1-${Date.now()}@tempfail.test`;
    const res = await t.api.post('/v1/emails', { from: from(), to: [to], subject: 'x', text: 'y' });
    const e = await waitEmail(t.api, res.body.id, (x) => x.recipients[0].status === 'delivered');
    expect(e.attempts).to.equal(2);
    expect(sink.rcptAttempts(to)).to.equal(2);
    expect(await types(res.body.id)).to.deep.equal(['email.delivery_delayed', 'email.sent', 'email.delivered']);
  });

  it('fails the recipient with email.failed when the retry schedule runs out', async function () {
    const to = `tf9-${Date.now()}@tempfail.test`;
    const res = await t.api.post('/v1/emails', { from: from(), to: [to], subject: 'x', text: 'y' });
    const e = await waitEmail(t.api, res.body.id, (x) => x.status === 'failed');
    expect(e.recipients[0].status).to.equal('failed');
    // one first attempt and one per entry of outbound.retry_schedule
    expect(sink.rcptAttempts(to)).to.equal(3);
    expect(await types(res.body.id)).to.deep.equal(['email.delivery_delayed', 'email.failed']);
  });

  it('a connection lost after the end of DATA is ambiguous: exactly one copy, never resent by itself', async function () {
    const to = `cut-${Date.now()}@drop.test`;
    const res = await t.api.post('/v1/emails', { from: from(), to: [to], subject: 'Password reset', text: 'y' });
    const e = await waitEmail(t.api, res.body.id, (x) => x.status === 'ambiguous');
    expect(e.recipients[0].status).to.equal('ambiguous');
    // longer than the whole retry schedule
    await new Promise((r) => setTimeout(r, 3000));
    expect(sink.messagesTo(to)).to.have.length(1);
    expect((await t.api.get(`/v1/emails/${res.body.id}`)).body.status).to.equal('ambiguous');
    // the operator's retry is the one way out, and it does send again
    await retryAmbiguous(api.deps, res.body.id);
    api.core.wake('mta');
    await waitEmail(t.api, res.body.id, (x) => x.status === 'ambiguous' && x.attempts === 2);
    expect(sink.messagesTo(to)).to.have.length(2);
  });

  it('with tls enforced, a server without STARTTLS gets nothing', async function () {
    const strict = await verifiedDomain(t, world, { tls: 'enforced' });
    const to = `strict-${Date.now()}@ok.test`;
    const res = await t.api.post('/v1/emails', { from: `a@${strict.domain}`, to: [to], subject: 'x', text: 'y' });
    const e = await waitEmail(
      t.api,
      res.body.id,
      (x) => x.recipients[0].status === 'deferred' || x.recipients[0].status === 'failed',
    );
    expect(e.recipients[0].status).to.be.oneOf(['deferred', 'failed']);
    expect(sink.messagesTo(to)).to.have.length(0);
  });

  it('a message queued for later fails with domain_not_verified once its domain is deleted', async function () {
    const d = await verifiedDomain(t, world);
    const res = await t.api.post('/v1/emails', {
      from: `a@${d.domain}`,
      to: [`later-${Date.now()}@ok.test`],
      subject: 'x',
      text: 'y',
      scheduled_at: new Date(Date.now() + 1500).toISOString(),
    });
    expect(res.status).to.equal(202);
    expect((await t.api.delete(`/v1/domains/${d.id}`)).status).to.equal(200);
    const e = await waitEmail(t.api, res.body.id, (x) => x.status === 'failed');
    expect(e.status_reason).to.equal('domain_not_verified');
    expect(sink.messagesTo(res.body.to[0])).to.have.length(0);
  });

  it('a null MX bounces at once', async function () {
    world.add('nullmx.test', 'MX', { exchange: '.', priority: 0 });
    const res = await t.api.post('/v1/emails', { from: from(), to: [`x@nullmx.test`], subject: 'x', text: 'y' });
    const e = await waitEmail(t.api, res.body.id, (x) => x.status === 'failed');
    expect(e.recipients[0].status).to.equal('bounced');
  });

  it('a connection lost while the body is still going out is retried, not ambiguous', async function () {
    // several attempts of a 4 MB message, each built, signed and cut off: slow on a loaded 2-core machine
    this.timeout(60_000);
    const to = `big-${Date.now()}@cut.test`;
    const big = Buffer.alloc(3_000_000, 7).toString('base64');
    const res = await t.api.post('/v1/emails', {
      from: from(),
      to: [to],
      subject: 'Large',
      text: 'y',
      attachments: [{ filename: 'data.bin', content: big }],
    });
    expect(res.status, res.text).to.equal(202);
    const e = await waitEmail(t.api, res.body.id, (x) => x.status === 'failed', 50_000);
    expect(e.recipients[0].status).to.equal('failed');
    expect(await types(res.body.id)).to.deep.equal(['email.delivery_delayed', 'email.failed']);
  });

  it('uses the return path subdomain for the envelope only when its MX was found, else outbound.hostname', async function () {
    const bare = await verifiedDomain(t, world, {}, true);
    const to = `verp-${Date.now()}@ok.test`;
    await t.api.post('/v1/emails', { from: `a@${bare.domain}`, to: [to], subject: 'x', text: 'y' });
    expect((await sink.waitForMessage(to)).envelope.from).to.match(
      /^bounce\+[0-9a-z]+-[0-9a-z]+@mta\.appliance\.test$/,
    );
    const full = await verifiedDomain(t, world);
    const to2 = `verp2-${Date.now()}@ok.test`;
    await t.api.post('/v1/emails', { from: `a@${full.domain}`, to: [to2], subject: 'x', text: 'y' });
    expect((await sink.waitForMessage(to2)).envelope.from).to.match(
      new RegExp(`^bounce\\+[0-9a-z]+-[0-9a-z]+@send\\.${full.domain.replace(/\./g, '\\.')}$`),
    );
  });

  it('stops live sends from a domain that lost a record (temporary_failure): 422 at once, queued mail fails', async function () {
    const d = await verifiedDomain(t, world);
    const later = await t.api.post('/v1/emails', {
      from: `a@${d.domain}`,
      to: [`tf-${Date.now()}@ok.test`],
      subject: 'x',
      text: 'y',
      scheduled_at: new Date(Date.now() + 2000).toISOString(),
    });
    expect(later.status).to.equal(202);
    const dkim = d.records.find((r) => r.required)!;
    world.remove(dkim.name);
    const checked = await t.api.post(`/v1/domains/${d.id}/verify`);
    expect(checked.body.status).to.equal('temporary_failure');
    expectError(
      await t.api.post('/v1/emails', { from: `a@${d.domain}`, to: ['x@ok.test'], subject: 'x', text: 'y' }),
      422,
      'domain_not_verified',
    );
    const e = await waitEmail(t.api, later.body.id, (x) => x.status === 'failed');
    expect(e.status_reason).to.equal('domain_not_verified');
    expect(sink.messagesTo(later.body.to[0])).to.have.length(0);
  });

  it('delivers to several recipient domains in separate queue rows, email.sent once', async function () {
    const stamp = Date.now();
    const to = [`a-${stamp}@ok.test`, `b-${stamp}@ok2.test`, `c-${stamp}@ok2.test`];
    const res = await t.api.post('/v1/emails', { from: from(), to, subject: 'x', text: 'y' });
    const e = await waitEmail(
      t.api,
      res.body.id,
      (x) => x.status === 'accepted' && x.recipients.every((r: { status: string }) => r.status === 'delivered'),
    );
    expect(e.attempts).to.be.at.least(1);
    for (const a of to) expect(sink.messagesTo(a)).to.have.length(1);
    const seen = await types(res.body.id);
    expect(seen.filter((x) => x === 'email.sent')).to.have.length(1);
    expect(seen.filter((x) => x === 'email.delivered')).to.have.length(3);
    const rows = await api.deps.store
      .knex('outbound_queue')
      .where({ email_id: res.body.id })
      .select<Array<{ route: string }>>('route');
    expect(rows.map((r) => r.route).sort()).to.deep.equal(['ok.test', 'ok2.test']);
  });

  it('test and live mail due together: the simulation is settled as its row is claimed, the live row goes over SMTP, each once', async function () {
    const testKey = await t.newKey({ mode: 'test' });
    const at = new Date(Date.now() + 1500).toISOString();
    const liveTo = `mixed-${Date.now()}@ok.test`;
    const live = await t.api.post('/v1/emails', {
      from: from(),
      to: [liveTo],
      subject: 'live',
      text: 'y',
      scheduled_at: at,
    });
    const sims = await Promise.all(
      ['delivered', 'bounced', 'delayed'].map((local) =>
        testKey.api.post('/v1/emails', {
          from: from(),
          to: [`${local}@simulator.posthorn.test`],
          subject: 'test',
          text: 'y',
          scheduled_at: at,
        }),
      ),
    );
    for (const r of [live, ...sims]) expect(r.status, r.text).to.equal(202);
    const [delivered, bounced, delayed] = sims.map((r) => r.body.id as string);
    await waitEmail(t.api, live.body.id, (e) => e.status === 'accepted' && e.recipients[0].status === 'delivered');
    expect(sink.messagesTo(liveTo)).to.have.length(1);
    const d = await waitEmail(testKey.api, delivered, (e) => e.status === 'accepted');
    expect(d).to.include({ attempts: 1, simulated: true });
    expect(await types(delivered)).to.deep.equal(['email.scheduled', 'email.sent', 'email.delivered']);
    const b = await waitEmail(testKey.api, bounced, (e) => e.status === 'failed');
    expect(b.recipients[0].status).to.equal('bounced');
    expect(await types(bounced)).to.deep.equal(['email.scheduled', 'email.bounced', 'email.failed']);
    const late = await waitEmail(testKey.api, delayed, (e) => e.status === 'accepted');
    expect(late.attempts).to.equal(2);
    expect(await types(delayed)).to.deep.equal([
      'email.scheduled',
      'email.delivery_delayed',
      'email.sent',
      'email.delivered',
    ]);
    // nothing of the test mail reached a server
    expect(
      sink.messages.filter((m) => m.envelope.to.some((a: string) => a.endsWith('@simulator.posthorn.test'))),
    ).to.have.length(0);
    // simulated bounces never add to the suppression list
    expect(
      await api.deps.store
        .knex('suppressions')
        .where({ project_id: t.project.id, address: 'bounced@simulator.posthorn.test' }),
    ).to.have.length(0);
  });

  it('mail that waited in the queue goes out with its attachments, and mail without any goes out without', async function () {
    const at = new Date(Date.now() + 1200).toISOString();
    const stamp = Date.now();
    const withFile = await t.api.post('/v1/emails', {
      from: from(),
      to: [`filed-${stamp}@ok.test`],
      subject: 'x',
      text: 'y',
      scheduled_at: at,
      attachments: [
        { filename: 'a.txt', content: Buffer.from('first').toString('base64') },
        { filename: 'b.txt', content: Buffer.from('second').toString('base64') },
      ],
    });
    const bare = await t.api.post('/v1/emails', {
      from: from(),
      to: [`bare-${stamp}@ok.test`],
      subject: 'x',
      text: 'y',
      scheduled_at: at,
    });
    for (const r of [withFile, bare]) expect(r.status, r.text).to.equal(202);
    const parsed = await simpleParser((await sink.waitForMessage(`filed-${stamp}@ok.test`)).raw);
    expect(parsed.attachments.map((a) => [a.filename, a.content.toString()])).to.deep.equal([
      ['a.txt', 'first'],
      ['b.txt', 'second'],
    ]);
    expect((await simpleParser((await sink.waitForMessage(`bare-${stamp}@ok.test`)).raw)).attachments).to.have.length(
      0,
    );
  });

  it('delivers to several recipients of one domain and reuses connections', async function () {
    const before = sink.connections;
    const to = Array.from({ length: 6 }, (_, i) => `many${i}-${Date.now()}@ok.test`);
    const res = await t.api.post('/v1/emails', {
      from: from(),
      to: to.slice(0, 3),
      cc: [to[3]],
      bcc: to.slice(4),
      subject: 'x',
      text: 'y',
    });
    const e = await waitEmail(t.api, res.body.id, (x) =>
      x.recipients.every((r: { status: string }) => r.status === 'delivered'),
    );
    expect(e.status).to.equal('accepted');
    for (const a of to) expect(sink.messagesTo(a)).to.have.length(1);
    // Bcc stays out of the headers every recipient sees
    expect(sink.messagesTo(to[0])[0].raw.toString()).to.not.match(/^bcc:/im);
    expect(sink.connections - before).to.be.at.most(5);
  });
});

describe('MX selection and STARTTLS (direct mode)', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let world: DnsWorld;
  let v4: SmtpSink;
  let v6: SmtpSink | null = null;
  let api: TestApi;
  let t: Tenant;
  let from: string;

  before(async function () {
    db = freshSqlite();
    await db.store.migrateLatest();
    world = await startDnsWorld();
    v4 = await startSink();
    // the second server listens on ::1 at the same port: MX hosts differ by address only
    v6 = await startSink({ host: '::1', port: v4.port, starttls: true });
    world.add('mx4.sink.test', 'A', '127.0.0.1');
    world.add('mx6.sink.test', 'AAAA', '::1');
    api = await startTestApi(
      db.store,
      {
        outbound: { hostname: 'mta.appliance.test', mx_port: v4.port, retry_schedule: ['1s'] },
        dns: {
          resolvers: [world.address],
          zone: 'dkim.mx.test',
          server: { enabled: true, host: '127.0.0.1', port: 0 },
        },
      },
      { roles: { mta: true, dns: true } },
    );
    world.delegate('dkim.mx.test', '127.0.0.1', api.running.dnsPort!);
    t = await api.tenant({ mode: 'live' });
    from = `a@${(await verifiedDomain(t, world)).domain}`;
  });
  after(async function () {
    await api.stop();
    await v4.stop();
    await v6?.stop();
    await world.stop();
    await db.drop();
  });

  it('tries MX hosts in preference order and uses STARTTLS when offered', async function () {
    world.add('pref.test', 'MX', { exchange: 'mx4.sink.test', priority: 20 });
    world.add('pref.test', 'MX', { exchange: 'mx6.sink.test', priority: 10 });
    const to = `p-${Date.now()}@pref.test`;
    await t.api.post('/v1/emails', { from, to: [to], subject: 'x', text: 'y' });
    const got = await v6!.waitForMessage(to);
    expect(got.secure, 'STARTTLS was offered, so the message went over TLS').to.equal(true);
    expect(v4.messagesTo(to)).to.have.length(0);
  });

  it('falls back to the next MX when the preferred one does not answer', async function () {
    await v6!.stop();
    v6 = null;
    world.add('fallback.test', 'MX', { exchange: 'mx6.sink.test', priority: 10 });
    world.add('fallback.test', 'MX', { exchange: 'mx4.sink.test', priority: 20 });
    const to = `f-${Date.now()}@fallback.test`;
    await t.api.post('/v1/emails', { from, to: [to], subject: 'x', text: 'y' });
    expect((await v4.waitForMessage(to)).secure).to.equal(false);
  });

  it('delivers to the address records of a domain without MX (RFC 5321 §5.1)', async function () {
    world.add('nomx.test', 'A', '127.0.0.1');
    const to = `n-${Date.now()}@nomx.test`;
    const res = await t.api.post('/v1/emails', { from, to: [to], subject: 'x', text: 'y' });
    await v4.waitForMessage(to);
    await waitEmail(t.api, res.body.id, (x) => x.status === 'accepted');
  });
});
