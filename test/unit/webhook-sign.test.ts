import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { generateWebhookSecret, signatureHeader } from '../../src/modules/notifying/webhooks/sign.js';

describe('webhook signatures (interface §6, CONTRACT §4)', function () {
  const body = JSON.stringify({ id: 'evt_1', object: 'event', type: 'email.delivered', data: { subject: 'Grüße' } });
  // read when a test runs, not when the file loads: the suite may run minutes later
  let t = 0;
  beforeEach(() => {
    t = Math.floor(Date.now() / 1000);
  });
  const stripe = new Stripe('sk_test_x', { telemetry: false });

  it('makes whsec_ secrets of 32 random bytes', function () {
    const s = generateWebhookSecret();
    expect(s).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(s.slice('whsec_'.length), 'base64')).to.have.length(32);
    expect(generateWebhookSecret()).to.not.equal(s);
  });

  it('matches an HMAC computed by hand with openssl over a UTF-8 body', function () {
    // printf '%s' '1700000000.{"id":"evt_1","subject":"Grüße"}' | openssl dgst -sha256 -hmac '<secret>'
    const raw = '{"id":"evt_1","subject":"Grüße"}';
    expect(signatureHeader(['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/A+8hyOaQ6A='], raw, 1700000000)).to.equal(
      't=1700000000,v1=5158076235e2d5306414cd5d3638c26037e9f4ffac9997f0b06b2c4eea6a799c',
    );
  });

  it('keys the HMAC with the whole secret string, prefix included, not its decoded bytes', function () {
    const secret = generateWebhookSecret();
    const v1 = signatureHeader([secret], body, t).split(',')[1].slice(3);
    expect(v1).to.equal(createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${t}.${body}`, 'utf8').digest('hex'));
    expect(v1).to.not.equal(
      createHmac('sha256', Buffer.from(secret.slice(6), 'base64'))
        .update(`${t}.${body}`, 'utf8')
        .digest('hex'),
    );
  });

  it('carries one v1 per secret during a rotation, in order', function () {
    const secrets = [
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/A+8hyOaQ6A=',
      'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=',
    ];
    expect(signatureHeader(secrets, '{"id":"evt_1","subject":"Grüße"}', 1700000000)).to.equal(
      't=1700000000,v1=5158076235e2d5306414cd5d3638c26037e9f4ffac9997f0b06b2c4eea6a799c,v1=b4bb77515ef5867195d0a36d508d8a918ffc500b25d3a3534eddd4e700428edd',
    );
  });

  it('verifies with the stripe library for each secret, and not for another', function () {
    const [a, b] = [generateWebhookSecret(), generateWebhookSecret()];
    const header = signatureHeader([a, b], body, t);
    for (const secret of [a, b]) expect(stripe.webhooks.constructEvent(body, header, secret).id).to.equal('evt_1');
    expect(() => stripe.webhooks.constructEvent(body, header, generateWebhookSecret())).to.throw(/signature/i);
  });

  it('fails verification when the body is re-serialized', function () {
    const secret = generateWebhookSecret();
    const header = signatureHeader([secret], body, t);
    expect(() => stripe.webhooks.constructEvent(JSON.stringify(JSON.parse(body), null, 2), header, secret)).to.throw(
      /signature/i,
    );
  });
});
