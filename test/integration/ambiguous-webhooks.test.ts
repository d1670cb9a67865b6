import { expect } from 'chai';
import { freshSqlite, type TestDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { startDnsWorld, type DnsWorld } from '../helpers/dns-world.js';
import { startReceiver, type HttpsReceiver, type Received } from '../helpers/https-receiver.js';
import { startSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { routeSinkDomains, verifiedDomain, waitEmail } from '../helpers/live.js';
import { waitFor } from '../helpers/wait.js';
import { retryAmbiguous } from '../../src/modules/sending/emails/queue.service.js';

const SIM = 'simulator.posthorn.test';
const ACTION = (id: string) =>
  `Whether the server accepted the message is unknown; it will not be sent again by itself. Ask the recipient, then run \`posthorn queue retry ${id}\` to send it again.`;

let n = 0;
const path = (kind: string) => `/ok/${kind}-${Date.now().toString(36)}-${++n}`;

// email.ambiguous end to end: the outcome made by the simulator, by a real SMTP sink that drops
// the connection after DATA, and by the operator's retry, signed and POSTed to an HTTPS endpoint.
describe('email.ambiguous reaches the endpoints that subscribe to it, and only those', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let world: DnsWorld;
  let sink: SmtpSink;
  let hooks: HttpsReceiver;
  let api: TestApi;

  before(async function () {
    db = freshSqlite();
    await db.store.migrateLatest();
    world = await startDnsWorld();
    sink = await startSink();
    hooks = await startReceiver();
    routeSinkDomains(world);
    world.add('hooks.test', 'A', '127.0.0.1');
    api = await startTestApi(
      db.store,
      {
        outbound: { hostname: 'mta.appliance.test', mx_port: sink.port, retry_schedule: ['1s', '1s'] },
        dns: {
          resolvers: [world.address],
          zone: 'dkim.appliance.test',
          server: { enabled: true, host: '127.0.0.1', port: 0 },
        },
        network: { allow_private: true },
        webhooks: { ca_file: hooks.caFile, retry_schedule: ['0s', '1s'] },
      },
      { roles: { mta: true, dns: true, webhooks: true } },
    );
    world.delegate('dkim.appliance.test', '127.0.0.1', api.running.dnsPort!);
  });
  after(async function () {
    await api?.stop();
    await hooks?.stop();
    await sink?.stop();
    await world?.stop();
    await db?.drop();
  });

  /** An endpoint subscribed to email.ambiguous (and email.delivered), and one created without `events`. */
  async function endpoints(t: Tenant) {
    const make = async (kind: string, extra: Record<string, unknown>) => {
      const p = path(kind);
      const res = await t.api.post('/v1/webhooks', { url: hooks.url(p), ...extra });
      expect(res.status, res.text).to.equal(201);
      return { id: res.body.id as string, path: p, events: res.body.events as string[] };
    };
    return {
      subscribed: await make('subscribed', { events: ['email.ambiguous', 'email.delivered'] }),
      plain: await make('plain', {}),
    };
  }

  const posted = (prefix: string, emailId: string, type: string) => (r: Received) =>
    r.path.startsWith(prefix) && r.json?.type === type && r.json?.data?.email_id === emailId;

  /** The endpoints that got a delivery of the email's email.ambiguous events (made in the fan-out's one transaction). */
  async function fannedOutTo(t: Tenant, emailId: string): Promise<string[][]> {
    const events = (await t.api.get(`/v1/emails/${emailId}/events`)).body.data as Array<{
      type: string;
      webhook_deliveries: Array<{ endpoint_id: string }>;
    }>;
    return events
      .filter((e) => e.type === 'email.ambiguous')
      .map((e) => e.webhook_deliveries.map((d) => d.endpoint_id));
  }

  it('a test key sending to ambiguous@: the subscribed endpoint gets it with its details, the default one does not', async function () {
    const t = await api.tenant();
    const { subscribed, plain } = await endpoints(t);
    expect(plain.events).to.not.include('email.ambiguous');
    const res = await t.api.post('/v1/emails', {
      from: 'a@example.test',
      to: [`ambiguous@${SIM}`],
      subject: 'Password reset',
      text: 'reset link',
      tags: { kind: 'reset' },
    });
    expect(res.status, res.text).to.equal(202);
    const id = res.body.id as string;
    const got = await hooks.waitFor(
      posted(subscribed.path, id, 'email.ambiguous'),
      15_000,
      'email.ambiguous at the subscribed endpoint',
    );
    expect(got.json).to.include({ object: 'event', type: 'email.ambiguous', simulated: true });
    expect(got.json.data).to.deep.include({
      email_id: id,
      recipient: `ambiguous@${SIM}`,
      environment: 'test',
      subject: 'Password reset',
      tags: { kind: 'reset' },
    });
    expect(got.json.data.details).to.deep.equal({
      host: null,
      stage: 'data',
      last_reply: 'simulated: the connection was lost after the end of DATA',
      action: ACTION(id),
    });
    expect(got.headers['service-event-id']).to.equal(got.json.id);

    // the default endpoint is alive (it gets the next email's delivery) and never got this one
    const other = (
      await t.api.post('/v1/emails', {
        from: 'a@example.test',
        to: [`delivered@${SIM}`],
        subject: 'Receipt',
        text: 'x',
      })
    ).body.id as string;
    await hooks.waitFor(
      posted(plain.path, other, 'email.delivered'),
      15_000,
      'email.delivered at the default endpoint',
    );
    expect(hooks.to(plain.path).filter((r) => r.json?.type === 'email.ambiguous')).to.deep.equal([]);
    expect(await fannedOutTo(t, id)).to.deep.equal([[subscribed.id]]);
  });

  it('a live send whose connection is lost after DATA: host, stage data and the last reply; again after a retry that ends the same way', async function () {
    const t = await api.tenant({ mode: 'live' });
    const domain = await verifiedDomain(t, world);
    const { subscribed, plain } = await endpoints(t);
    const to = `cut-${Date.now()}@drop.test`;
    const res = await t.api.post('/v1/emails', {
      from: `Shop <orders@${domain.domain}>`,
      to: [to],
      subject: 'Password reset',
      text: 'reset link',
    });
    expect(res.status, res.text).to.equal(202);
    const id = res.body.id as string;
    await waitEmail(t.api, id, (e) => e.status === 'ambiguous');
    const first = await hooks.waitFor(
      posted(subscribed.path, id, 'email.ambiguous'),
      15_000,
      'email.ambiguous at the subscribed endpoint',
    );
    expect(first.json).to.include({ type: 'email.ambiguous', simulated: false });
    expect(first.json.data).to.deep.include({ email_id: id, recipient: to, environment: 'live' });
    const details = first.json.data.details as Record<string, string>;
    expect(details).to.include({ host: 'mx.sink.test', stage: 'data', action: ACTION(id) });
    expect(details.last_reply).to.match(/^no answer after the message was transmitted/);
    expect(sink.messagesTo(to)).to.have.length(1);

    // the operator's retry sends it again; lost again, it is ambiguous again, and said so again
    await retryAmbiguous(api.deps, id);
    api.core.wake('mta');
    await waitEmail(t.api, id, (e) => e.status === 'ambiguous' && e.attempts === 2);
    const both = await waitFor(
      async () => {
        const got = hooks.to(subscribed.path).filter(posted(subscribed.path, id, 'email.ambiguous'));
        return got.length === 2 ? got : null;
      },
      15_000,
      'a second email.ambiguous',
    );
    expect(both[1].json.id).to.not.equal(both[0].json.id);
    expect(both[1].json.data.details).to.include({ host: 'mx.sink.test', stage: 'data' });
    expect(sink.messagesTo(to)).to.have.length(2);

    expect(hooks.to(plain.path).filter((r) => r.json?.type === 'email.ambiguous')).to.deep.equal([]);
    expect(await fannedOutTo(t, id)).to.deep.equal([[subscribed.id], [subscribed.id]]);
  });
});
