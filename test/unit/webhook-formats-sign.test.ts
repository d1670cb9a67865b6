import { expect } from 'chai';
import { Resend } from 'resend';
import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import {
  generateWebhookSecret,
  signedHeaders,
  standardSignatureHeader,
  standardSigningKey,
} from '../../src/modules/notifying/webhooks/sign.js';
import { payloadFormatOf, signatureFormatOf } from '../../src/modules/notifying/webhooks/webhook-formats.js';

describe('webhook signature formats', function () {
  const body = JSON.stringify({
    type: 'email.delivered',
    created_at: '2026-11-29T10:00:00.000Z',
    data: { s: 'Grüße' },
  });
  // read when a test runs, not when the file loads: the suite may run minutes later
  let now = 0;
  beforeEach(() => {
    now = Date.now();
  });
  const endpoint = (signatureFormat: 'service' | 'standard', secret = generateWebhookSecret()) => ({
    signatureFormat,
    secret,
    previousSecret: null,
    previousSecretUntil: null,
  });

  context('standard (Standard Webhooks)', function () {
    it('keys the HMAC with the base64-decoded part of the whsec_ secret', function () {
      const secret = generateWebhookSecret();
      expect(standardSigningKey(secret)).to.deep.equal(Buffer.from(secret.slice('whsec_'.length), 'base64'));
      expect(standardSigningKey(secret)).to.have.length(32);
    });

    it("matches the Standard Webhooks reference libraries' published example", function () {
      expect(
        standardSignatureHeader(
          ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
          'msg_p5jXN8AQM9LWM0D4loKWxJek',
          '{"test": 2432232314}',
          1614265330,
        ),
      ).to.equal('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    });

    it('sends webhook-id (the event id), webhook-timestamp and webhook-signature, and no Service-* header', function () {
      const h = signedHeaders(endpoint('standard'), 'evt_1', 3, body, now);
      expect(
        Object.keys(h)
          .filter((k) => !k.startsWith('svix-'))
          .sort(),
      ).to.deep.equal(['webhook-id', 'webhook-signature', 'webhook-timestamp']);
      expect(h['webhook-id']).to.equal('evt_1');
      expect(h['webhook-timestamp']).to.equal(String(Math.floor(now / 1000)));
      expect(h['webhook-signature']).to.match(/^v1,[A-Za-z0-9+/]{43}=$/);
    });

    it('sends the same three values as svix-id, svix-timestamp and svix-signature (what Resend’s docs read)', function () {
      const h = signedHeaders(endpoint('standard'), 'evt_1', 3, body, now);
      expect(
        Object.keys(h)
          .filter((k) => k.startsWith('svix-'))
          .sort(),
      ).to.deep.equal(['svix-id', 'svix-signature', 'svix-timestamp']);
      expect(h['svix-id']).to.equal(h['webhook-id']);
      expect(h['svix-timestamp']).to.equal(h['webhook-timestamp']);
      expect(h['svix-signature']).to.equal(h['webhook-signature']);
    });

    it('verifies with the standardwebhooks package and with Resend’s SDK, given the secret as shown', function () {
      const e = endpoint('standard');
      const h = signedHeaders(e, 'evt_1', 1, body, now);
      expect(new Webhook(e.secret).verify(body, h)).to.deep.equal(JSON.parse(body));
      const resend = new Resend('re_x');
      // as Resend's docs write it: the svix-* headers into verify()
      const headers = { id: h['svix-id'], timestamp: h['svix-timestamp'], signature: h['svix-signature'] };
      expect(resend.webhooks.verify({ payload: body, headers, webhookSecret: e.secret })).to.deep.equal(
        JSON.parse(body),
      );
      expect(() => new Webhook(e.secret).verify(body.replace('Grüße', 'Grüsse'), h)).to.throw(/signature/i);
      expect(() => new Webhook(generateWebhookSecret()).verify(body, h)).to.throw(/signature/i);
      // the id is signed too: a delivery cannot be passed off as another event
      expect(() => new Webhook(e.secret).verify(body, { ...h, 'webhook-id': 'evt_2' })).to.throw(/signature/i);
    });

    it('carries one v1 per secret during a rotation, space-separated, new first; each verifies', function () {
      const [fresh, old] = [generateWebhookSecret(), generateWebhookSecret()];
      const h = signedHeaders(
        { signatureFormat: 'standard', secret: fresh, previousSecret: old, previousSecretUntil: now + 1000 },
        'evt_1',
        1,
        body,
        now,
      );
      const sigs = h['webhook-signature'].split(' ');
      expect(sigs).to.have.length(2);
      expect(sigs[0]).to.equal(standardSignatureHeader([fresh], 'evt_1', body, Math.floor(now / 1000)));
      expect(sigs[1]).to.equal(standardSignatureHeader([old], 'evt_1', body, Math.floor(now / 1000)));
      for (const secret of [fresh, old]) expect(new Webhook(secret).verify(body, h)).to.be.an('object');
    });

    it('drops the old secret once its grace period is over', function () {
      const h = signedHeaders(
        {
          signatureFormat: 'standard',
          secret: generateWebhookSecret(),
          previousSecret: generateWebhookSecret(),
          previousSecretUntil: now,
        },
        'evt_1',
        1,
        body,
        now,
      );
      expect(h['webhook-signature'].split(' ')).to.have.length(1);
    });
  });

  context('service (the default)', function () {
    it('sends the Service-* headers, which the stripe library verifies', function () {
      const e = endpoint('service');
      const h = signedHeaders(e, 'evt_1', 2, body, now);
      expect(Object.keys(h).sort()).to.deep.equal([
        'Service-Delivery-Attempt',
        'Service-Event-Id',
        'Service-Signature',
      ]);
      expect(h).to.include({ 'Service-Event-Id': 'evt_1', 'Service-Delivery-Attempt': '2' });
      const stripe = new Stripe('sk_test_x', { telemetry: false });
      expect(() => stripe.webhooks.constructEvent(body, h['Service-Signature'], e.secret)).to.not.throw();
    });
  });

  it('reads a stored format back as one of the list, or the default', function () {
    expect(signatureFormatOf('standard')).to.equal('standard');
    expect(signatureFormatOf('svix')).to.equal('service');
    expect(payloadFormatOf('resend')).to.equal('resend');
    expect(payloadFormatOf(null)).to.equal('service');
  });
});
