import { expect } from 'chai';
import { freshSqlite, type TestDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { startDnsWorld, type DnsWorld } from '../helpers/dns-world.js';
import { startSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { dkimResults, verifiedDomain, waitEmail } from '../helpers/live.js';
import { providerQueueId } from '../../src/mta/smtp-sender.js';

describe('relay mode (outbound.mode: relay)', function () {
  this.timeout(30_000);
  let db: TestDatabase;
  let world: DnsWorld;
  let relay: SmtpSink;
  let api: TestApi;
  before(async function () {
    db = freshSqlite();
    await db.store.migrateLatest();
    world = await startDnsWorld();
    relay = await startSink({ users: { posthorn: 's3cret' } });
    api = await startTestApi(
      db.store,
      {
        outbound: {
          hostname: 'mta.relay.test',
          mode: 'relay',
          relay: { host: '127.0.0.1', port: relay.port, user: 'posthorn', pass: 's3cret' },
        },
        dns: {
          resolvers: [world.address],
          zone: 'dkim.relay.test',
          server: { enabled: true, host: '127.0.0.1', port: 0 },
        },
      },
      { roles: { mta: true, dns: true } },
    );
    world.delegate('dkim.relay.test', '127.0.0.1', api.running.dnsPort!);
  });
  after(async function () {
    await api.stop();
    await relay.stop();
    await world.stop();
    await db.drop();
  });

  it('hands the message to the relay with AUTH and keeps its queue id as provider_message_id', async function () {
    const t = await api.tenant({ mode: 'live' });
    const d = await verifiedDomain(t, world);
    // the recipient's domain does not even exist: the relay, not the appliance, routes it
    const to = 'someone@nowhere.invalid';
    const res = await t.api.post('/v1/emails', { from: `a@${d.domain}`, to: [to], subject: 'via relay', text: 'x' });
    const msg = await relay.waitForMessage(to);
    expect(msg.user).to.equal('posthorn');
    expect(await dkimResults(world, msg.raw)).to.deep.equal([`${d.domain}:pass`]);
    const e = await waitEmail(t.api, res.body.id, (x) => x.status === 'accepted');
    expect(e.provider_message_id).to.match(/^SINK\d+$/);
  });

  it('hands every recipient over in one transaction with one envelope sender naming the email', async function () {
    const t = await api.tenant({ mode: 'live' });
    const d = await verifiedDomain(t, world);
    const stamp = Date.now();
    const to = [`one-${stamp}@a.invalid`, `two-${stamp}@b.invalid`];
    const res = await t.api.post('/v1/emails', {
      from: `a@${d.domain}`,
      to,
      cc: [`three-${stamp}@a.invalid`],
      subject: 'together',
      text: 'x',
    });
    const e = await waitEmail(
      t.api,
      res.body.id,
      (x) => x.status === 'accepted' && x.recipients.every((r: { status: string }) => r.status === 'delivered'),
    );
    const copies = relay.messages.filter((m) =>
      m.envelope.to.some((a) => a.endsWith(`-${stamp}@a.invalid`) || a.endsWith(`-${stamp}@b.invalid`)),
    );
    expect(copies).to.have.length(1);
    expect(copies[0].envelope.to).to.have.members([...to, `three-${stamp}@a.invalid`]);
    expect(copies[0].envelope.from).to.equal(`bounce+${res.body.id.slice(4)}@send.${d.domain}`);
    expect(e.provider_message_id).to.match(/^SINK\d+$/);
  });
});

describe('providerQueueId', function () {
  const cases: Array<[string, string | null]> = [
    ['250 2.0.0 Ok: queued as 4FhX1Z2abc', '4FhX1Z2abc'],
    ['250 OK id=1tXyZa-0003Ab-Cd', '1tXyZa-0003Ab-Cd'],
    ['250 2.0.0 x8NAbc123 Message accepted for delivery', 'x8NAbc123'],
    ['250 2.0.0 OK <0102018f.abcd@email.amazonses.com>', '0102018f.abcd@email.amazonses.com'],
    ['250 OK', null],
  ];
  for (const [reply, id] of cases)
    it(`reads ${JSON.stringify(reply)}`, () => expect(providerQueueId(reply)).to.equal(id));
});
