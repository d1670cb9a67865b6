import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { generateWebhookSecret, signatureHeader } from '../../src/webhooks/sign.js';

describe('webhook signatures (interface §6)', function () {
  const body = JSON.stringify({ id: 'evt_1', object: 'event', type: 'email.delivered', data: { subject: 'Grüße' } });
  const t = Math.floor(Date.now() / 1000);

  it('makes whsec_ secrets of 32 random bytes', function () {
    const s = generateWebhookSecret();
    expect(s).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(s.slice(6), 'base64')).to.have.length(32);
    expect(generateWebhookSecret()).to.not.equal(s);
  });

  it('is the HMAC-SHA256 of "<t>.<body>" keyed with the whole secret', function () {
    const secret = generateWebhookSecret();
    const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
    expect(signatureHeader([secret], body, t)).to.equal(`t=${t},v1=${expected}`);
  });

  it('verifies with the stripe library, once per secret during a rotation', function () {
    const stripe = new Stripe('sk_test_unused', { telemetry: false });
    const [a, b] = [generateWebhookSecret(), generateWebhookSecret()];
    const header = signatureHeader([a, b], body, t);
    expect(header.split(',').filter((p) => p.startsWith('v1='))).to.have.length(2);
    for (const secret of [a, b]) expect(stripe.webhooks.constructEvent(body, header, secret).id).to.equal('evt_1');
    expect(() => stripe.webhooks.constructEvent(body, header, generateWebhookSecret())).to.throw(/signature/i);
  });
});
