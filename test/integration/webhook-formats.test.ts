import { expect } from 'chai';
import { Resend } from 'resend';
import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { startHookWorld, type HookWorld } from '../helpers/hook-world.js';
import type { Received } from '../helpers/https-receiver.js';
import { expectError } from '../helpers/assert.js';
import { waitFor } from '../helpers/wait.js';
import { newId } from '../../src/lib/ids.js';
import { findEmailById } from '../../src/modules/sending/emails/emails.repo.js';
import { signTrackingToken } from '../../src/modules/sending/tracking/tracking-token.js';
import { trackingKey } from '../../src/modules/sending/tracking/tracking.service.js';

const SIM = 'simulator.posthorn.test';
const stripe = new Stripe('sk_test_unused', { telemetry: false });
const resend = new Resend('re_x');

let n = 0;
const path = () => `/ok/formats-${Date.now().toString(36)}-${++n}`;

/** Resend's SDK, as a receiver written for Resend calls it */
const resendVerify = (r: Received, secret: string, payload = r.rawBody) =>
  resend.webhooks.verify({
    payload,
    headers: {
      id: r.headers['webhook-id'],
      timestamp: r.headers['webhook-timestamp'],
      signature: r.headers['webhook-signature'],
    },
    webhookSecret: secret,
  });

eachDatabase('webhook signature and payload formats', (db) => {
  let hw: HookWorld;
  let api: TestApi;
  let t: Tenant;

  before(async function () {
    hw = await startHookWorld();
    api = await startTestApi(
      db().store,
      { ...hw.config({ retry_schedule: ['0s', '1s'] }), http: { public_url: 'https://track.example.test' } },
      { roles: { mta: true, webhooks: true } },
    );
    t = await api.tenant();
  });
  after(async function () {
    await api.stop();
    await hw.stop();
  });

  async function endpoint(extra: Record<string, unknown> = {}) {
    const p = path();
    const res = await t.api.post('/v1/webhooks', { url: hw.hooks.url(p), ...extra });
    expect(res.status, res.text).to.equal(201);
    return { ...res.body, path: p } as { id: string; secret: string; path: string; signature: string; payload: string };
  }

  const send = async (to: string, from = 'a@example.test') => {
    const res = await t.api.post('/v1/emails', {
      from,
      to: [to],
      subject: 'Hook',
      text: 'body',
      tags: { order: '42' },
    });
    expect(res.status, res.text).to.equal(202);
    return res.body.id as string;
  };

  /** the request of type `type` about email `emailId` at the endpoint (both payloads have data.email_id) */
  const received = (e: { path: string }, emailId: string, type: string) =>
    hw.hooks.waitFor(
      (r) => r.path === e.path && r.json?.type === type && r.json.data?.email_id === emailId,
      10_000,
      `${type} of ${emailId} at ${e.path}`,
    );

  describe('the defaults', function () {
    it('an endpoint created without the fields is service/service, everywhere it is shown', async function () {
      const e = await endpoint();
      expect(e).to.include({ signature: 'service', payload: 'service' });
      expect((await t.api.get(`/v1/webhooks/${e.id}`)).body).to.include({ signature: 'service', payload: 'service' });
      const listed = (await t.api.get('/v1/webhooks')).body.data.find((x: { id: string }) => x.id === e.id);
      expect(listed).to.include({ signature: 'service', payload: 'service' });
    });

    it("gets today's headers and body", async function () {
      const e = await endpoint();
      const id = await send(`delivered@${SIM}`);
      const r = await received(e, id, 'email.delivered');
      expect(r.json).to.include({ object: 'event', type: 'email.delivered', simulated: true });
      expect(r.json.id).to.match(/^evt_/);
      expect(r.headers['service-event-id']).to.equal(r.json.id);
      expect(r.headers['service-delivery-attempt']).to.equal('1');
      expect(stripe.webhooks.constructEvent(r.rawBody, r.headers['service-signature'], e.secret).id).to.equal(
        r.json.id,
      );
      expect(Object.keys(r.headers).filter((h) => h.startsWith('webhook-'))).to.deep.equal([]);
    });

    it('an endpoint written without the new columns (by an older release) reads as service/service', async function () {
      const e = await endpoint();
      const knex = db().store.knex;
      const {
        signature_format: _s,
        payload_format: _p,
        ...older
      } = await knex('webhook_endpoints').where({ id: e.id }).first();
      const id = newId('webhook');
      await knex('webhook_endpoints').insert({ ...older, id });
      expect((await t.api.get(`/v1/webhooks/${id}`)).body).to.include({ id, signature: 'service', payload: 'service' });
    });
  });

  describe('signature: "standard"', function () {
    it('verifies with standardwebhooks and with Resend’s SDK; a tampered body fails both', async function () {
      const e = await endpoint({ signature: 'standard' });
      expect(e).to.include({ signature: 'standard', payload: 'service' });
      expect(e.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
      const id = await send(`delivered@${SIM}`);
      const r = await received(e, id, 'email.delivered');
      // the same event id the service format carries, in the body and as webhook-id
      expect(r.headers['webhook-id']).to.equal(r.json.id);
      expect(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000)).to.be.below(60);
      expect(r.headers).to.not.have.property('service-signature');
      expect(r.headers).to.not.have.property('service-event-id');
      expect(new Webhook(e.secret).verify(r.rawBody, r.headers)).to.deep.equal(r.json);
      expect(resendVerify(r, e.secret)).to.deep.equal(r.json);
      const tampered = r.rawBody.replace('"Hook"', '"Hooc"');
      expect(tampered).to.not.equal(r.rawBody);
      expect(() => new Webhook(e.secret).verify(tampered, r.headers)).to.throw(/signature/i);
      expect(() => resendVerify(r, e.secret, tampered)).to.throw(/signature/i);
    });

    it('during a rotation carries two signatures; the old and the new secret each verify', async function () {
      const e = await endpoint({ signature: 'standard', events: ['email.delivered'] });
      const rotated = await t.api.post(`/v1/webhooks/${e.id}/rotate-secret`);
      expect(rotated.status, rotated.text).to.equal(200);
      expect(rotated.body).to.include({ signature: 'standard' });
      const id = await send(`delivered@${SIM}`);
      const r = await received(e, id, 'email.delivered');
      expect(r.headers['webhook-signature']).to.match(/^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
      for (const secret of [rotated.body.secret as string, e.secret]) {
        expect(new Webhook(secret).verify(r.rawBody, r.headers)).to.deep.equal(r.json);
        expect(resendVerify(r, secret)).to.deep.equal(r.json);
      }
    });
  });

  describe('payload: "resend"', function () {
    let e: Awaited<ReturnType<typeof endpoint>>;
    before(async function () {
      e = await endpoint({
        signature: 'standard',
        payload: 'resend',
        events: ['email.sent', 'email.delivered', 'email.bounced', 'email.clicked'],
      });
      expect(e).to.include({ signature: 'standard', payload: 'resend' });
    });

    const resendShaped = async (emailId: string, type: string) => {
      const r = await received(e, emailId, type);
      expect(resendVerify(r, e.secret)).to.deep.equal(r.json);
      expect(Object.keys(r.json)).to.deep.equal(['type', 'created_at', 'data']);
      expect(r.headers['webhook-id']).to.match(/^evt_/);
      return r.json;
    };

    it('email.sent and email.delivered in Resend’s shape', async function () {
      const to = `delivered@${SIM}`;
      const id = await send(to);
      const email = (await t.api.get(`/v1/emails/${id}`)).body;
      for (const type of ['email.sent', 'email.delivered']) {
        const body = await resendShaped(id, type);
        expect(body.created_at).to.match(/^\d{4}-\d\d-\d\dT/);
        // the email's time, read from its id (or the event's, had this process's ids run ahead of its clock)
        expect(Date.parse(body.data.created_at)).to.be.within(
          Date.parse(email.created_at),
          Date.parse(body.created_at),
        );
        expect(body.data).to.deep.equal({
          created_at: body.data.created_at,
          email_id: id,
          from: 'a@example.test',
          to: [to],
          subject: 'Hook',
          tags: { order: '42' },
        });
      }
    });

    it('email.bounced with bounce {message, subType, type}', async function () {
      const to = `bounced@${SIM}`;
      const id = await send(to);
      const body = await resendShaped(id, 'email.bounced');
      expect(body.data).to.include({ email_id: id, subject: 'Hook' });
      expect(body.data.to).to.deep.equal([to]);
      expect(body.data.bounce).to.have.keys(['message', 'subType', 'type']);
      expect(body.data.bounce).to.include({ type: 'Permanent', subType: 'NoEmail' });
      expect(body.data.bounce.message).to.be.a('string').and.not.equal('');
    });

    it('email.clicked with click {link, timestamp, userAgent}', async function () {
      const domain = `formats-${Date.now().toString(36)}.test`;
      const d = await t.api.post('/v1/domains', { domain });
      expect(d.status, d.text).to.equal(201);
      const on = await t.api.patch(`/v1/domains/${d.body.id}`, { click_tracking: true });
      expect(on.status, on.text).to.equal(200);
      const to = `delivered@${SIM}`;
      const id = await send(to, `shop@${domain}`);
      const email = await waitFor(async () => findEmailById(db().store.knex, id), 5000, 'the email');
      const token = signTrackingToken(await trackingKey(db().store)(), {
        kind: 'click',
        emailId: id,
        recipientId: email.recipients[0].id,
        url: 'https://shop.example/order/42',
      });
      const click = await fetch(`${api.baseUrl}/t/c/${token}`, {
        redirect: 'manual',
        headers: { 'user-agent': 'TestMail/1.0' },
      });
      expect(click.status).to.equal(302);
      const body = await resendShaped(id, 'email.clicked');
      expect(body.data).to.include({ email_id: id, from: `shop@${domain}` });
      expect(body.data.click).to.deep.equal({
        link: 'https://shop.example/order/42',
        timestamp: body.created_at,
        userAgent: 'TestMail/1.0',
      });
    });
  });

  describe('PATCH /v1/webhooks/{id}', function () {
    it('switches the formats, and the next delivery follows them', async function () {
      const e = await endpoint({ events: ['email.delivered'] });
      const res = await t.api.patch(`/v1/webhooks/${e.id}`, { signature: 'standard', payload: 'resend' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ signature: 'standard', payload: 'resend' });
      expect((await t.api.get(`/v1/webhooks/${e.id}`)).body).to.include({ signature: 'standard', payload: 'resend' });
      const id = await send(`delivered@${SIM}`);
      const r = await received(e, id, 'email.delivered');
      expect(r.json).to.not.have.property('object');
      expect(new Webhook(e.secret).verify(r.rawBody, r.headers)).to.deep.equal(r.json);

      const back = await t.api.patch(`/v1/webhooks/${e.id}`, { signature: 'service' });
      expect(back.body).to.include({ signature: 'service', payload: 'resend' });
      const again = await send(`delivered@${SIM}`);
      const r2 = await received(e, again, 'email.delivered');
      expect(stripe.webhooks.constructEvent(r2.rawBody, r2.headers['service-signature'], e.secret)).to.be.an('object');
    });

    for (const [body, field] of [
      [{ signature: 'svix' }, 'signature'],
      [{ payload: 'sendgrid' }, 'payload'],
      [{ signature: 1 }, 'signature'],
      [{ payload: null }, 'payload'],
    ] as const) {
      it(`answers 400 naming ${field} for ${JSON.stringify(body)}, on create and on update`, async function () {
        expectError(
          await t.api.post('/v1/webhooks', { url: hw.hooks.url(path()), ...body }),
          400,
          'validation_error',
          field,
        );
        const e = await endpoint();
        expectError(await t.api.patch(`/v1/webhooks/${e.id}`, body), 400, 'validation_error', field);
        expect((await t.api.get(`/v1/webhooks/${e.id}`)).body).to.include({ signature: 'service', payload: 'service' });
      });
    }
  });
});
