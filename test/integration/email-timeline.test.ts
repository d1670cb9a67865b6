import { expect } from 'chai';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { startHookWorld, type HookWorld } from '../helpers/hook-world.js';
import type { HttpsReceiver } from '../helpers/https-receiver.js';
import { expectError } from '../helpers/assert.js';
import { waitFor } from '../helpers/wait.js';

const SIM = 'simulator.posthorn.test';

// GET /v1/emails/{id}/events and /content: what the dashboard's email page shows, for API clients too.
eachDatabase("an email's timeline and content (GET /v1/emails/{id}/events, /content)", (db) => {
  let hw: HookWorld;
  let hooks: HttpsReceiver;
  let api: TestApi;
  let t: Tenant;
  before(async function () {
    hw = await startHookWorld();
    hooks = hw.hooks;
    api = await startTestApi(db().store, hw.config(), { roles: { mta: true, webhooks: true } });
    t = await api.tenant();
  });
  after(async function () {
    await api.stop();
    await hw.stop();
  });

  const send = async (tenant: Tenant, to: string) => {
    const r = await tenant.api.post('/v1/emails', {
      from: 'a@example.test',
      to: [to],
      subject: 'Timeline',
      html: '<p>Hi <b>there</b></p>',
      text: 'Hi there',
      tags: { kind: 'receipt' },
    });
    expect(r.status, r.text).to.equal(202);
    return r.body.id as string;
  };

  it('lists the events oldest first, with the webhook deliveries made of each', async function () {
    const hook = await t.api.post('/v1/webhooks', { url: hooks.url('/ok/timeline') });
    expect(hook.status).to.equal(201);
    const id = await send(t, `bounced@${SIM}`);
    const events = await waitFor(
      async () => {
        const r = await t.api.get(`/v1/emails/${id}/events`);
        const list = r.body.data as Array<{ type: string; webhook_deliveries: Array<{ status: string }> }>;
        const done =
          list.some((e) => e.type === 'email.bounced') &&
          list.every((e) => e.webhook_deliveries.length === 1 && e.webhook_deliveries[0].status === 'succeeded');
        return done ? r.body : null;
      },
      10_000,
      'the bounce and its webhook deliveries',
    );
    expect(events.object).to.equal('list');
    const types = events.data.map((e: { type: string }) => e.type);
    // LIFECYCLE: a hard bounce is the recipient's bounce, then the email's failure
    expect(types).to.deep.equal(['email.bounced', 'email.failed']);
    const bounced = events.data[0];
    expect(bounced).to.include({ object: 'event', recipient: `bounced@${SIM}`, simulated: true });
    expect(bounced.data.email_id).to.equal(id);
    expect(bounced.data.details.bounce_type).to.equal('Permanent');
    expect(bounced.webhook_deliveries[0]).to.include({
      endpoint_id: hook.body.id,
      status: 'succeeded',
      attempts: 1,
      last_status_code: 200,
    });
    // the same events the endpoint received
    const received = hooks.to('/ok/timeline').map((r) => r.json as { id: string });
    expect(received.map((r) => r.id)).to.include.members(events.data.map((e: { id: string }) => e.id));
    await t.api.delete(`/v1/webhooks/${hook.body.id}`);
  });

  it('gives the subject, HTML and text as sent', async function () {
    const id = await send(t, `delivered@${SIM}`);
    const r = await t.api.get(`/v1/emails/${id}/content`);
    expect(r.status).to.equal(200);
    expect(r.body).to.deep.equal({
      id,
      object: 'email_content',
      subject: 'Timeline',
      html: '<p>Hi <b>there</b></p>',
      text: 'Hi there',
    });
  });

  it("answers 404 for another project's email, 403 without emails:read and 401 without a key", async function () {
    const other = await api.tenant();
    const theirs = await send(other, `delivered@${SIM}`);
    const sender = await t.newKey({ scopes: ['emails:send'] });
    for (const part of ['events', 'content']) {
      expectError(await t.api.get(`/v1/emails/${theirs}/${part}`), 404, 'not_found');
      expectError(await t.api.get(`/v1/emails/msg_00000000000000000000000000/${part}`), 404, 'not_found');
      expectError(await sender.api.get(`/v1/emails/${theirs}/${part}`), 403, 'forbidden');
      expectError(await api.anonymous.get(`/v1/emails/${theirs}/${part}`), 401, 'unauthorized');
    }
  });
});
