import { expect } from 'chai';
import type { Tenant } from '../helpers/api.js';
import { saveLanes } from '../../src/modules/deliverability/shaping/shaping.repo.js';
import { startLiveWorld, verifiedDomain, waitEmail, type LiveWorld } from '../helpers/live.js';
import { startSink, type SmtpSink } from '../helpers/smtp-sink.js';

// A provider's limits hold across all the domains it hosts (docs/delivery.md): many recipient
// domains whose MX hosts share a provider's suffix share its connections, counted at the receiving
// end; and a receiver that refuses the connection itself (a 554 banner) defers, never bounces.

describe('traffic shaping: limits per provider across its domains', function () {
  this.timeout(60_000);
  let w: LiveWorld;
  let t: Tenant;
  let from: string;
  let alpha: SmtpSink;
  let beta: SmtpSink;
  let banner: SmtpSink;

  before(async function () {
    w = await startLiveWorld('dkim.limits.test', 'mta.limits.test', {
      outbound: {
        providers: [
          { name: 'alpha', mx_suffixes: ['.mx.alpha.test'], max_connections: 2, max_messages_per_connection: 3 },
          { name: 'beta', mx_suffixes: ['.mx.beta.test'], max_connections: 3 },
        ],
      },
    });
    // each provider's MX hosts on an address of its own, each slow to answer DATA so that sessions overlap
    alpha = await startSink({ host: '127.0.0.22', port: w.sink.port, dataDelayMs: 150 });
    beta = await startSink({ host: '127.0.0.23', port: w.sink.port, dataDelayMs: 150 });
    banner = await startSink({
      host: '127.0.0.24',
      port: w.sink.port,
      banner: () => ({ code: 554, message: '5.7.1 mx.closed.test ESMTP not accepting mail from your address' }),
    });
    for (let i = 0; i < 8; i++) {
      // four MX host names per provider, several domains each
      w.world.add(`a${i}.hosted.test`, 'MX', { exchange: `in${i % 4}.mx.alpha.test`, priority: 10 });
      w.world.add(`b${i}.hosted.test`, 'MX', { exchange: `in${i % 4}.mx.beta.test`, priority: 10 });
    }
    for (let i = 0; i < 4; i++) {
      w.world.add(`in${i}.mx.alpha.test`, 'A', '127.0.0.22');
      w.world.add(`in${i}.mx.beta.test`, 'A', '127.0.0.23');
    }
    w.world.add('closed.test', 'MX', { exchange: 'mx.closed.test', priority: 10 });
    w.world.add('mx.closed.test', 'A', '127.0.0.24');
    t = await w.api.tenant({ mode: 'live' });
    from = `shop@${(await verifiedDomain(t, w.world)).domain}`;
  });
  after(async function () {
    for (const s of [alpha, beta, banner]) await s?.stop();
    await w?.stop();
  });

  const send = async (to: string) => {
    const r = await t.api.post('/v1/emails', { from, to: [to], subject: 'Receipt', text: 'Thanks' });
    expect(r.status, r.text).to.equal(202);
    return r.body.id as string;
  };

  it('never opens more connections to a provider than its max_connections, whichever of its domains and MX hosts the mail is for', async function () {
    const ids = await Promise.all(
      Array.from({ length: 24 }, (_, i) => send(`r${i}@${i % 2 ? 'a' : 'b'}${i % 8}.hosted.test`)),
    );
    for (const id of ids) await waitEmail(t.api, id, (e) => e.status === 'accepted', 30_000);
    expect(alpha.messages).to.have.length(12);
    expect(beta.messages).to.have.length(12);
    // counted at the receiver, by the address the connections came from
    const peakAlpha = Math.max(...alpha.maxOpenBy.values());
    const peakBeta = Math.max(...beta.maxOpenBy.values());
    expect(peakAlpha).to.be.within(1, 2);
    expect(peakBeta).to.be.within(1, 3);
    // and the limit is used: more than one session at once to the larger one
    expect(peakBeta).to.be.greaterThan(1);
    // three messages per connection at most to alpha: twelve messages took at least four connections
    expect(alpha.connections).to.be.at.least(4);
  });

  it("honours a suspension another node stored (or this one before a restart): the provider's mail waits, the sink sees nothing", async function () {
    const until = Date.now() + 10 * 60_000;
    await w.db.store.tx((trx) =>
      saveLanes(trx, [
        {
          provider: 'beta',
          sourceIp: '',
          known: true,
          state: 'suspended',
          untilAt: until,
          reason: '421 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily deferred',
          ratePerMinute: null,
          updatedAt: Date.now(),
        },
      ]),
    );
    const before = beta.connections;
    // the MTA reads stored suspensions every few seconds
    await new Promise((r) => setTimeout(r, 5500));
    const id = await send('later@b1.hosted.test');
    const e = await waitEmail(t.api, id, (x) => x.recipients[0].status === 'deferred').catch(async (err: Error) => {
      const now = (await t.api.get(`/v1/emails/${id}`)).body;
      const lanes = await w.db.store.reader('mta_lanes').select('*');
      throw new Error(`${err.message}: ${JSON.stringify(now)} lanes ${JSON.stringify(lanes)}`);
    });
    expect(e.status).to.equal('queued');
    const events = (await t.api.get(`/v1/emails/${id}/events`)).body.data as Array<Record<string, any>>;
    const delayed = events.find((x) => x.type === 'email.delivery_delayed')!;
    expect(delayed.data.details.diagnostic).to.contain('[TSS04]');
    expect(Date.parse(delayed.data.details.next_attempt_at)).to.equal(until);
    expect(beta.connections).to.equal(before);
  });

  it('defers, never bounces, when the receiver refuses the connection with a 554 banner', async function () {
    const id = await send('someone@closed.test');
    const e = await waitEmail(t.api, id, (x) => x.recipients[0].status !== 'queued' && x.status !== 'submitting');
    expect(e.recipients[0].status).to.equal('deferred');
    const events = (await t.api.get(`/v1/emails/${id}/events`)).body.data as Array<Record<string, any>>;
    expect(events.map((x) => x.type))
      .to.include('email.delivery_delayed')
      .and.not.include('email.bounced');
    const delayed = events.find((x) => x.type === 'email.delivery_delayed')!;
    expect(delayed.data.details.diagnostic).to.match(/^554 5\.7\.1 mx\.closed\.test/);
    const suppressions = (await t.api.get('/v1/suppressions')).body.data as Array<{ email?: string; address?: string }>;
    expect(JSON.stringify(suppressions)).to.not.contain('someone@closed.test');
  });
});
