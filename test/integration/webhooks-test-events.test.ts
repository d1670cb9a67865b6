import { expect } from 'chai';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { startHookWorld, type HookWorld } from '../helpers/hook-world.js';
import type { HttpsReceiver } from '../helpers/https-receiver.js';
import { expectError } from '../helpers/assert.js';
import { waitFor } from '../helpers/wait.js';

const SIM = 'simulator.posthorn.test';

let n = 0;
const path = (kind: string) => `/${kind}/${Date.now().toString(36)}-${++n}`;

// POST /v1/webhooks/{id}/test, and the delivery log's event type, email and answer bodies (docs/webhooks.md)
eachDatabase('webhook test events and the delivery log', (db) => {
  let hw: HookWorld;
  let hooks: HttpsReceiver;
  let api: TestApi;
  let t: Tenant;

  before(async function () {
    hw = await startHookWorld();
    hooks = hw.hooks;
    // an answer with a long body: 3,000 bytes, a NUL and a three-byte character across the 1 KiB mark
    hooks.setBehaviour('/chatty/', (_r, answer) =>
      answer(200, `NUL\u0000 ${'x'.repeat(1017)}€ and then ${'y'.repeat(2000)}`, { 'content-type': 'text/plain' }),
    );
    hooks.setBehaviour('/teapot/', (_r, answer) => answer(418, '{"error":"I am a teapot"}'));
    api = await startTestApi(db().store, hw.config({ retry_schedule: ['0s', '1h'] }), {
      roles: { mta: true, webhooks: true },
    });
    t = await api.tenant();
  });
  after(async function () {
    await api.stop();
    await hw.stop();
  });

  async function endpoint(kind: string, extra: Record<string, unknown> = {}, tenant = t) {
    const p = path(kind);
    const res = await tenant.api.post('/v1/webhooks', { url: hooks.url(p), ...extra });
    expect(res.status, res.text).to.equal(201);
    return { ...res.body, path: p } as { id: string; path: string };
  }

  it('sends a simulated event of the chosen type to that endpoint alone, signed like any other', async function () {
    const mine = await endpoint('ok', { events: ['email.bounced'] });
    const other = await endpoint('ok', { events: ['email.bounced'] });
    const res = await t.api.post(`/v1/webhooks/${mine.id}/test`, { type: 'email.bounced' });
    expect(res.status, res.text).to.equal(202);
    expect(res.body).to.include({ object: 'webhook_delivery', endpoint_id: mine.id, status: 'pending' });
    const got = await waitFor(async () => hooks.to(mine.path)[0] ?? null, 10_000, 'the test event');
    expect(got.json).to.include({ id: res.body.event_id, type: 'email.bounced', simulated: true });
    expect(got.json.data).to.include({ email_id: 'em_00000000000000000000000000', recipient: 'delivered@example.com' });
    expect(got.json.data.details).to.include({ bounce_type: 'Permanent' });
    expect(got.headers['service-signature']).to.match(/^t=\d+,v1=[0-9a-f]{64}$/);
    // the other endpoint, subscribed to the same type, gets nothing (a real bounce would go to both)
    await new Promise((r) => setTimeout(r, 700));
    expect(hooks.to(other.path)).to.have.length(0);
  });

  it('sends a test event of a type the endpoint does not subscribe to: it was asked for by name', async function () {
    const e = await endpoint('ok', { events: ['email.delivered'] });
    expect((await t.api.post(`/v1/webhooks/${e.id}/test`, { type: 'email.clicked' })).status).to.equal(202);
    const got = await waitFor(async () => hooks.to(e.path)[0] ?? null, 10_000, 'the test event');
    expect(got.json.type).to.equal('email.clicked');
    expect(got.json.data.details.url).to.equal('https://example.com/');
  });

  it('refuses a type that is not an email event, an unknown field, no key or a key without the scope, a paused endpoint, and another project’s endpoint', async function () {
    const e = await endpoint('ok');
    expectError(
      await t.api.post(`/v1/webhooks/${e.id}/test`, { type: 'contact.created' }),
      400,
      'validation_error',
      'type',
    );
    expectError(await t.api.post(`/v1/webhooks/${e.id}/test`, {}), 400, 'validation_error', 'type');
    expectError(
      await t.api.post(`/v1/webhooks/${e.id}/test`, { type: 'email.sent', colour: 'red' }),
      400,
      'validation_error',
      'colour',
    );
    expectError(await api.anonymous.post(`/v1/webhooks/${e.id}/test`, { type: 'email.sent' }), 401, 'unauthorized');
    const reader = await t.newKey({ scopes: ['emails:read'] });
    expectError(await reader.api.post(`/v1/webhooks/${e.id}/test`, { type: 'email.sent' }), 403, 'forbidden');
    const other = await api.tenant();
    expectError(await other.api.post(`/v1/webhooks/${e.id}/test`, { type: 'email.sent' }), 404, 'not_found');
    expect((await t.api.patch(`/v1/webhooks/${e.id}`, { active: false })).status).to.equal(200);
    expectError(await t.api.post(`/v1/webhooks/${e.id}/test`, { type: 'email.sent' }), 409, 'conflict');
    expect(hooks.to(e.path)).to.have.length(0);
  });

  it('logs each delivery with its event type, its email and the first KiB of what the endpoint answered', async function () {
    const chatty = await endpoint('chatty', { events: ['email.sent', 'email.delivered'] });
    const sent = await t.api.post('/v1/emails', {
      from: 'a@example.test',
      to: [`delivered@${SIM}`],
      subject: 's',
      text: 't',
    });
    expect(sent.status, sent.text).to.equal(202);
    const log = await waitFor(
      async () => {
        const r = await t.api.get(`/v1/webhooks/${chatty.id}/deliveries`);
        return r.body.data.length === 2 && r.body.data.every((d: any) => d.status === 'succeeded') ? r.body.data : null;
      },
      10_000,
      'two succeeded deliveries',
    );
    expect(log.map((d: any) => d.event_type).sort()).to.deep.equal(['email.delivered', 'email.sent']);
    for (const d of log) {
      expect(d.email_id).to.equal(sent.body.id);
      const [a] = d.attempt_log;
      expect(a.status_code).to.equal(200);
      // 1,024 bytes: the NUL shown as U+FFFD, and the euro sign that straddles the mark left out whole
      expect(a.response_body).to.equal(`NUL\uFFFD ${'x'.repeat(1017)}`);
    }
  });

  it('logs a failure’s answer too, and a test event’s delivery with no email', async function () {
    const e = await endpoint('teapot');
    expect((await t.api.post(`/v1/webhooks/${e.id}/test`, { type: 'email.sent' })).status).to.equal(202);
    const [d] = await waitFor(
      async () => {
        const r = await t.api.get(`/v1/webhooks/${e.id}/deliveries`);
        return r.body.data[0]?.attempts === 1 ? r.body.data : null;
      },
      10_000,
      'the failed attempt',
    );
    expect(d).to.include({ event_type: 'email.sent', email_id: null, status: 'pending', last_status_code: 418 });
    expect(d.attempt_log[0]).to.include({ status_code: 418, response_body: '{"error":"I am a teapot"}' });
  });
});
