import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { startDnsWorld, type DnsWorld } from '../helpers/dns-world.js';
import { startReceiver, type HttpsReceiver, type Received } from '../helpers/https-receiver.js';
import { expectError } from '../helpers/assert.js';
import { waitFor } from '../helpers/wait.js';
import { EVENT_TYPES } from '../../src/modules/notifying/events/event-types.js';
import { eventsOfEmail } from '../../src/modules/notifying/events/events.repo.js';
import { addSuppression } from '../../src/modules/sending/suppressions/suppressions.repo.js';

const SIM = 'simulator.posthorn.test';
const stripe = new Stripe('sk_test_unused', { telemetry: false });

/** interface §6 by hand: t= and one or more v1= over "<t>.<raw body>". */
function signatureOk(r: Received, secret: string): boolean {
  const parts = r.headers['service-signature'].split(',');
  const t = parts.find((p) => p.startsWith('t='))!.slice(2);
  const expected = createHmac('sha256', secret).update(`${t}.${r.rawBody}`).digest('hex');
  return (
    Math.abs(Date.now() / 1000 - Number(t)) < 300 &&
    parts.filter((p) => p.startsWith('v1=')).some((p) => p.slice(3) === expected)
  );
}

let n = 0;
const path = (kind: string) => `/${kind}/${Date.now().toString(36)}-${++n}`;

/** the values of a header as they came over the wire, however many times it was sent */
const rawValues = (r: Received, name: string) =>
  r.rawHeaders.filter((_, i) => i % 2 === 1 && r.rawHeaders[i - 1].toLowerCase() === name);

eachDatabase('webhooks (interface §2.5, §4.5, §6)', (db) => {
  let world: DnsWorld;
  let hooks: HttpsReceiver;
  let api: TestApi;
  let t: Tenant;

  before(async function () {
    world = await startDnsWorld();
    hooks = await startReceiver();
    world.add('hooks.test', 'A', '127.0.0.1');
    api = await startTestApi(
      db().store,
      {
        dns: { resolvers: [world.address] },
        network: { allow_private: true },
        webhooks: { ca_file: hooks.caFile, retry_schedule: ['0s', '1s', '1s', '1s'] },
      },
      { roles: { mta: true, webhooks: true } },
    );
    t = await api.tenant();
  });
  after(async function () {
    await api.stop();
    await hooks.stop();
    await world.stop();
  });

  async function endpoint(kind: string, extra: Record<string, unknown> = {}, tenant = t) {
    const p = path(kind);
    const res = await tenant.api.post('/v1/webhooks', { url: hooks.url(p), ...extra });
    expect(res.status, res.text).to.equal(201);
    return { ...res.body, path: p } as { id: string; secret: string; path: string; events: string[] };
  }

  const send = async (to: string | string[] = `delivered@${SIM}`, tenant = t) => {
    const res = await tenant.api.post('/v1/emails', {
      from: 'a@example.test',
      to: Array.isArray(to) ? to : [to],
      subject: 'Hook',
      text: 'secret body',
      tags: { order: '42' },
    });
    expect(res.status, res.text).to.equal(202);
    return res.body.id as string;
  };

  /** the endpoint's newest delivery once pred holds for it */
  const deliveryWhen = (tenant: Tenant, endpointId: string, pred: (d: any) => boolean, ms = 5000) =>
    waitFor(
      async () => {
        const d = (await tenant.api.get(`/v1/webhooks/${endpointId}/deliveries`)).body.data[0];
        return d && pred(d) ? d : null;
      },
      ms,
      `a delivery of ${endpointId} in the expected state`,
    );

  describe('endpoints', function () {
    it('creates an endpoint with a whsec_ secret shown once, subscribed to everything but email.received', async function () {
      const e = await endpoint('ok', { description: 'orders' });
      expect(e.id).to.match(/^whe_/);
      expect(e.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(e).to.include({ object: 'webhook_endpoint', active: true, description: 'orders' });
      expect(e.events).to.deep.equal(
        EVENT_TYPES.filter(
          (x) =>
            ![
              'email.received',
              'email.ambiguous',
              'email.cancelled',
              'email.unsubscribed',
              'domain.blocklisted',
              'domain.delisted',
              'contact.created',
              'contact.updated',
              'contact.deleted',
              'broadcast.sent',
            ].includes(x),
        ),
      );
      const again = await t.api.get(`/v1/webhooks/${e.id}`);
      expect(again.status).to.equal(200);
      expect(again.text).to.not.include('whsec_');
      expect((await t.api.get('/v1/webhooks')).text).to.not.include('whsec_');
    });

    it('changes url, events, description and active', async function () {
      const e = await endpoint('ok');
      const res = await t.api.patch(`/v1/webhooks/${e.id}`, {
        events: ['email.bounced'],
        active: false,
        description: null,
        url: hooks.url('/ok/other'),
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ active: false, description: null, url: hooks.url('/ok/other') });
      expect(res.body.events).to.deep.equal(['email.bounced']);
    });

    for (const [body, field] of [
      [{ url: 'https://hooks.test/x', colour: 'blue' }, 'colour'],
      [{}, 'url'],
      [{ url: 'https://hooks.test/x', events: ['email.exploded'] }, 'events[0]'],
      [{ url: 'https://hooks.test/x', events: [] }, 'events'],
      [{ url: 'http://hooks.test/x' }, 'url'],
      [{ url: 'not a url' }, 'url'],
      [{ url: 'https://nxdomain.invalid/x' }, 'url'],
    ] as const) {
      it(`answers 400 naming ${field} for ${JSON.stringify(body)}`, async function () {
        expectError(await t.api.post('/v1/webhooks', body), 400, 'validation_error', field);
      });
    }

    it("answers 404 for another project's endpoint on every route", async function () {
      const e = await endpoint('ok');
      const other = await api.tenant();
      for (const res of [
        await other.api.get(`/v1/webhooks/${e.id}`),
        await other.api.patch(`/v1/webhooks/${e.id}`, { active: false }),
        await other.api.post(`/v1/webhooks/${e.id}/rotate-secret`),
        await other.api.get(`/v1/webhooks/${e.id}/deliveries`),
        await other.api.post(`/v1/webhooks/${e.id}/replay`, { event_id: 'evt_00000000000000000000000000' }),
        await other.api.delete(`/v1/webhooks/${e.id}`),
      ])
        expectError(res, 404, 'not_found');
      expect((await other.api.get('/v1/webhooks')).body.data).to.deep.equal([]);
    });
  });

  describe('attachment paths (the same guard, webhooks.ca_file)', function () {
    it('downloads an https attachment and stores it with the email', async function () {
      hooks.setBehaviour('/files/', (_req, answer) => answer(200, 'quarterly numbers', { 'content-type': 'text/csv' }));
      const res = await t.api.post('/v1/emails', {
        from: 'a@example.test',
        to: [`delivered@${SIM}`],
        subject: 'x',
        text: 'y',
        attachments: [{ path: hooks.url('/files/report.csv') }],
      });
      expect(res.status, res.text).to.equal(202);
      const stored = await api.deps.store.knex('email_attachments').where({ email_id: res.body.id });
      expect(
        stored.map((a: { filename: string; content_type: string; content: Buffer }) => [
          a.filename,
          a.content_type,
          Buffer.from(a.content).toString(),
        ]),
      ).to.deep.equal([['report.csv', 'text/csv', 'quarterly numbers']]);
    });

    it('refuses a download that fails or is an executable', async function () {
      hooks.setBehaviour('/exe/', (_req, answer) => answer(200, 'MZ\u0090\u0000 program'));
      expectError(
        await t.api.post('/v1/emails', {
          from: 'a@example.test',
          to: [`delivered@${SIM}`],
          subject: 'x',
          text: 'y',
          attachments: [{ path: hooks.url('/status/404/x.pdf') }],
        }),
        400,
        'validation_error',
        'attachments[0].path',
      );
      expectError(
        await t.api.post('/v1/emails', {
          from: 'a@example.test',
          to: [`delivered@${SIM}`],
          subject: 'x',
          text: 'y',
          attachments: [{ path: hooks.url('/exe/setup.pdf') }],
        }),
        400,
        'validation_error',
        'attachments[0].path',
      );
    });
  });

  describe('delivery', function () {
    it('POSTs the §6 payload, signed, with the Service-* headers; the signature verifies by hand and with stripe', async function () {
      const e = await endpoint('ok');
      const id = await send();
      const r = await hooks.waitFor(
        (x) => x.path === e.path && x.json?.type === 'email.delivered' && x.json.data.email_id === id,
      );
      expect(signatureOk(r, e.secret)).to.equal(true);
      expect(stripe.webhooks.constructEvent(r.rawBody, r.headers['service-signature'], e.secret).id).to.equal(
        r.json.id,
      );
      expect(r.headers['service-event-id']).to.equal(r.json.id);
      expect(r.headers['service-delivery-attempt']).to.equal('1');
      expect(r.headers['content-type']).to.equal('application/json');
      expect(r.headers['user-agent']).to.match(/^Posthorn\//);
      expect(r.json).to.include({ object: 'event', type: 'email.delivered', simulated: true });
      expect(r.json.id).to.match(/^evt_/);
      expect(r.json.created_at).to.match(/\.\d{3}Z$/);
      expect(r.json.data).to.deep.include({
        email_id: id,
        environment: 'test',
        from: 'a@example.test',
        subject: 'Hook',
        tags: { order: '42' },
        recipient: `delivered@${SIM}`,
      });
      expect(r.json.data.request_id).to.match(/^req_/);
      expect(r.rawBody).to.not.include('secret body');
    });

    it('sends exactly one User-Agent header, naming Posthorn', async function () {
      const u = await api.tenant();
      const e = await endpoint('ok', { events: ['email.delivered'] }, u);
      await send(undefined, u);
      const r = await hooks.waitFor((x) => x.path === e.path);
      const agents = rawValues(r, 'user-agent');
      expect(agents, JSON.stringify(r.rawHeaders)).to.have.length(1);
      expect(agents[0]).to.match(/^Posthorn\//);
    });

    it('puts exactly the §6 keys in the payload and the details of each type: bounced, delivery_delayed, suppressed', async function () {
      const u = await api.tenant();
      await addSuppression(api.deps.store.knex, {
        projectId: u.project.id,
        address: 'blocked@example.test',
        reason: 'manual',
        emailId: null,
        createdAt: Date.now(),
      });
      const e = await endpoint('ok', { events: ['email.bounced', 'email.delivery_delayed', 'email.suppressed'] }, u);
      const bounced = await send(`bounced@${SIM}`, u);
      const delayed = await send(`delayed@${SIM}`, u);
      const suppressed = await send(['blocked@example.test', `delivered@${SIM}`], u);
      const at = (type: string, emailId: string) =>
        hooks.waitFor(
          (x) => x.path === e.path && x.json?.type === type && x.json.data.email_id === emailId,
          10_000,
          type,
        );
      const [b, d, s] = await Promise.all([
        at('email.bounced', bounced),
        at('email.delivery_delayed', delayed),
        at('email.suppressed', suppressed),
      ]);
      for (const r of [b, d, s]) {
        expect(Object.keys(r.json).sort(), r.json.type).to.deep.equal([
          'created_at',
          'data',
          'id',
          'object',
          'simulated',
          'type',
        ]);
        expect(Object.keys(r.json.data).sort(), r.json.type).to.deep.equal([
          'details',
          'email_id',
          'environment',
          'from',
          'recipient',
          'request_id',
          'subject',
          'tags',
        ]);
        expect(r.json.data, r.json.type).to.deep.include({
          environment: 'test',
          from: 'a@example.test',
          subject: 'Hook',
          tags: { order: '42' },
        });
        expect(r.json.data.request_id, r.json.type).to.match(/^req_/);
      }
      expect(b.json.data.recipient).to.equal(`bounced@${SIM}`);
      expect(b.json.data.details.bounce_type).to.equal('Permanent');
      expect(b.json.data.details.diagnostic)
        .to.be.a('string')
        .and.match(/^5\d\d /);
      expect(d.json.data.recipient).to.equal(`delayed@${SIM}`);
      expect(d.json.data.details.diagnostic)
        .to.be.a('string')
        .and.match(/^4\d\d /);
      expect(d.json.data.details.next_attempt_at).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(Date.parse(d.json.data.details.next_attempt_at)).to.be.above(Date.parse(d.json.created_at));
      expect(s.json.data.recipient).to.equal('blocked@example.test');
      expect(s.json.data.details).to.deep.equal({ reason: 'manual' });
    });

    it('counts a 2xx with a 200 KB body as delivered, in one attempt', async function () {
      hooks.setBehaviour('/big-answer/', (_req, answer) => answer(200, 'x'.repeat(200_000)));
      const u = await api.tenant();
      const e = await endpoint('big-answer', { events: ['email.delivered'] }, u);
      await send(undefined, u);
      const d = await deliveryWhen(u, e.id, (x) => x.status !== 'pending' || x.attempts > 0);
      expect(d).to.include({ status: 'succeeded', attempts: 1, last_status_code: 200, last_error: null });
      expect(d.attempt_log.map((a: { status_code: number }) => a.status_code)).to.deep.equal([200]);
      expect(hooks.to(e.path)).to.have.length(1);
    });

    it('sends only the subscribed types', async function () {
      const e = await endpoint('ok', { events: ['email.bounced'] });
      const ok = await send();
      const bounced = await send(`bounced@${SIM}`);
      await hooks.waitFor((x) => x.path === e.path && x.json.data.email_id === bounced);
      await new Promise((r) => setTimeout(r, 500));
      expect(hooks.to(e.path).map((x) => x.json.type)).to.deep.equal(['email.bounced']);
      expect(hooks.to(e.path).some((x) => x.json.data.email_id === ok)).to.equal(false);
      expect(hooks.to(e.path)[0].json.data.details.bounce_type).to.equal('Permanent');
    });

    it('retries after a 500 with the same event id and a higher attempt number, and logs both attempts', async function () {
      const e = await endpoint('fail-once', { events: ['email.delivered'] });
      await send();
      const second = await hooks.waitFor((x) => x.path === e.path && x.headers['service-delivery-attempt'] === '2');
      const first = hooks.to(e.path).find((x) => x.headers['service-delivery-attempt'] === '1')!;
      expect(second.json.id).to.equal(first.json.id);
      expect(second.headers['service-signature']).to.not.equal(first.headers['service-signature']);
      expect(signatureOk(second, e.secret)).to.equal(true);
      const log = await waitFor(
        async () => {
          const l = (await t.api.get(`/v1/webhooks/${e.id}/deliveries`)).body.data[0];
          return l?.status === 'succeeded' ? l : null;
        },
        5000,
        'a succeeded delivery',
      );
      expect(log.attempts).to.equal(2);
      expect(log.attempt_log.map((a: { status_code: number }) => a.status_code)).to.deep.equal([500, 200]);
      expect(log.attempt_log[0].response_ms).to.be.a('number');
    });

    it('counts a redirect as a failure and never follows it', async function () {
      const e = await endpoint('redirect', { events: ['email.delivered'] });
      await send();
      await hooks.waitFor((x) => x.path === e.path && x.headers['service-delivery-attempt'] === '2');
      expect(hooks.requests.some((x) => x.path.startsWith(e.path.replace('/redirect/', '/redirected/')))).to.equal(
        false,
      );
      const log = (await t.api.get(`/v1/webhooks/${e.id}/deliveries`)).body.data[0];
      expect(log.attempt_log[0]).to.include({ status_code: 302 });
      expect(log.attempt_log[0].error).to.match(/redirect/);
    });

    it('gives up after the last attempt of the schedule', async function () {
      const e = await endpoint('status', { events: ['email.delivered'] });
      const p = `/status/503${e.path.slice('/status'.length)}`;
      await t.api.patch(`/v1/webhooks/${e.id}`, { url: hooks.url(p) });
      await send();
      const log = await waitFor(
        async () => {
          const l = (await t.api.get(`/v1/webhooks/${e.id}/deliveries`)).body.data[0];
          return l?.status === 'failed' ? l : null;
        },
        10_000,
        'a failed delivery',
      );
      expect(log.attempts).to.equal(4);
      expect(hooks.to(p)).to.have.length(4);
    });

    it('signs with both secrets for a while after a rotation', async function () {
      const e = await endpoint('ok', { events: ['email.delivered'] });
      const rotated = await t.api.post(`/v1/webhooks/${e.id}/rotate-secret`);
      expect(rotated.status).to.equal(200);
      expect(rotated.body.secret)
        .to.match(/^whsec_/)
        .and.not.equal(e.secret);
      expect(Date.parse(rotated.body.previous_secret_expires_at) - Date.now()).to.be.closeTo(24 * 3_600_000, 60_000);
      await send();
      const r = await hooks.waitFor((x) => x.path === e.path);
      expect(r.headers['service-signature'].split(',').filter((x) => x.startsWith('v1='))).to.have.length(2);
      for (const secret of [e.secret, rotated.body.secret]) {
        expect(signatureOk(r, secret)).to.equal(true);
        expect(stripe.webhooks.constructEvent(r.rawBody, r.headers['service-signature'], secret).id).to.equal(
          r.json.id,
        );
      }
    });

    it('replays an event to an endpoint with the same event id', async function () {
      const e = await endpoint('ok', { events: ['email.delivered'] });
      await send();
      const first = await hooks.waitFor((x) => x.path === e.path);
      const res = await t.api.post(`/v1/webhooks/${e.id}/replay`, { event_id: first.json.id });
      expect(res.status, res.text).to.equal(202);
      await waitFor(async () => hooks.to(e.path).length === 2, 5000, 'the replay');
      const [a, b] = hooks.to(e.path);
      expect(b.json.id).to.equal(a.json.id);
      expect(b.rawBody).to.equal(a.rawBody);
      expectError(
        await t.api.post(`/v1/webhooks/${e.id}/replay`, { event_id: 'evt_00000000000000000000000000' }),
        404,
        'not_found',
      );
    });

    it("answers 404 not_found to a replay of another project's event, and delivers that event nowhere", async function () {
      const mine = await endpoint('ok', { events: ['email.delivered'] });
      await send();
      const theirs = await hooks.waitFor((x) => x.path === mine.path);
      const u = await api.tenant();
      const e = await endpoint('ok', { events: ['email.delivered'] }, u);
      expectError(await u.api.post(`/v1/webhooks/${e.id}/replay`, { event_id: theirs.json.id }), 404, 'not_found');
      expect((await u.api.get(`/v1/webhooks/${e.id}/deliveries`)).body.data).to.deep.equal([]);
      // the endpoint works: its own project's event reaches it, and that is all that did
      const own = await send(undefined, u);
      await hooks.waitFor((x) => x.path === e.path && x.json.data.email_id === own, 5000, "the project's own event");
      expect(hooks.to(e.path).map((x) => x.json.data.email_id)).to.deep.equal([own]);
    });

    it('sends nothing to a paused endpoint; its pending retry goes out once it is active again, events of the pause only by replay', async function () {
      const u = await api.tenant();
      const e = await endpoint('toggle', { events: ['email.delivered'] }, u);
      const before = await send(undefined, u);
      await hooks.waitFor((x) => x.path === e.path && x.json.data.email_id === before);
      expect((await u.api.patch(`/v1/webhooks/${e.id}`, { active: false })).body.active).to.equal(false);
      hooks.enable(e.path);
      const during = await send(undefined, u);
      const duringEvent = await waitFor(
        async () => (await eventsOfEmail(api.deps.store.knex, during)).find((x) => x.type === 'email.delivered'),
        5000,
        'the event of the pause',
      );
      // the retry of the first event was due a second after its failure
      await new Promise((r) => setTimeout(r, 2500));
      expect(hooks.to(e.path)).to.have.length(1);

      expect((await u.api.patch(`/v1/webhooks/${e.id}`, { active: true })).body.active).to.equal(true);
      const retry = await hooks.waitFor(
        (x) => x.path === e.path && x.headers['service-delivery-attempt'] === '2',
        5000,
        'the held retry',
      );
      expect(retry.json.data.email_id).to.equal(before);
      await new Promise((r) => setTimeout(r, 1500));
      expect(hooks.to(e.path).map((x) => x.json.data.email_id)).to.deep.equal([before, before]);

      expect((await u.api.post(`/v1/webhooks/${e.id}/replay`, { event_id: duringEvent.id })).status).to.equal(202);
      const replayed = await hooks.waitFor(
        (x) => x.path === e.path && x.json.id === duringEvent.id,
        5000,
        'the replayed event of the pause',
      );
      expect(replayed.json.data.email_id).to.equal(during);
    });

    it('sends nothing more to a deleted endpoint, pending retries included', async function () {
      const e = await endpoint('status', { events: ['email.delivered'] });
      const p = `/status/500${e.path.slice('/status'.length)}`;
      await t.api.patch(`/v1/webhooks/${e.id}`, { url: hooks.url(p) });
      await send();
      await hooks.waitFor((x) => x.path === p);
      expect((await t.api.delete(`/v1/webhooks/${e.id}`)).status).to.equal(200);
      const count = hooks.to(p).length;
      await new Promise((r) => setTimeout(r, 2500));
      expect(hooks.to(p).length).to.equal(count);
      expectError(await t.api.get(`/v1/webhooks/${e.id}`), 404, 'not_found');
    });

    it('counts an answer after 12 seconds as a timeout (webhooks.timeout_ms 10 s)', async function () {
      this.timeout(30_000);
      hooks.slowMs = 12_000;
      const e = await endpoint('slow', { events: ['email.delivered'] });
      await send();
      const log = await waitFor(
        async () => {
          const l = (await t.api.get(`/v1/webhooks/${e.id}/deliveries`)).body.data[0];
          return l?.attempt_log?.length ? l : null;
        },
        20_000,
        'the first attempt to end',
      );
      expect(log.attempt_log[0].status_code).to.equal(null);
      expect(log.attempt_log[0].error).to.match(/timeout/i);
      expect(log.attempt_log[0].response_ms).to.be.within(9_000, 11_500);
      await t.api.delete(`/v1/webhooks/${e.id}`);
    });

    it('keeps a slow endpoint from holding up the others', async function () {
      // held up, the fast endpoint would wait for the slow one's first answers (8 s); 6 s leaves a loaded
      // CI machine room for the sends themselves (one run took over 3 s for them)
      hooks.slowMs = 8000;
      const slow = await endpoint('slow', { events: ['email.delivered'] });
      const fast = await endpoint('ok', { events: ['email.delivered'] });
      const ids = await Promise.all(Array.from({ length: 8 }, () => send()));
      await waitFor(
        async () => ids.every((id) => hooks.to(fast.path).some((x) => x.json.data.email_id === id)),
        6000,
        'the fast endpoint to get every event',
      );
      expect(hooks.to(slow.path).length).to.be.at.most(4);
      hooks.slowMs = 12_000;
    });

    it("delivers a fast endpoint's events promptly while five slow endpoints on the same host fill their shares", async function () {
      this.timeout(30_000);
      const u = await api.tenant();
      const slow = await Promise.all(
        Array.from({ length: 5 }, () => endpoint('delay/6000', { events: ['email.delivered'] }, u)),
      );
      const fast = await endpoint('ok', { events: ['email.delivered'] }, u);
      const started = Date.now();
      const ids = await Promise.all(Array.from({ length: 8 }, () => send(undefined, u)));
      await waitFor(
        async () => ids.every((id) => hooks.to(fast.path).some((x) => x.json.data.email_id === id)),
        3000,
        'the fast endpoint to get every event',
      );
      const log = await waitFor(
        async () => {
          const l = (await u.api.get(`/v1/webhooks/${fast.id}/deliveries`)).body.data as Array<{
            status: string;
            attempts: number;
          }>;
          return l.length === 8 && l.every((d) => d.status === 'succeeded') ? l : null;
        },
        3000,
        'every delivery to the fast endpoint to succeed',
      );
      expect(log.map((d) => d.attempts)).to.deep.equal(Array(8).fill(1));
      expect(Date.now() - started).to.be.below(5000);
      // while the slow ones are still waiting for their answers, a full share each
      expect(slow.map((e) => hooks.to(e.path).filter((x) => x.status === null).length)).to.deep.equal([4, 4, 4, 4, 4]);
      for (const e of slow) await u.api.delete(`/v1/webhooks/${e.id}`);
    });
  });
});
