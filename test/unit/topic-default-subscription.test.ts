import { thrownApiError } from '../helpers/assert.js';
import { expect } from 'chai';
import { ApiError } from '../../src/lib/errors.js';
import {
  fromResendDefaultSubscription,
  toResendDefaultSubscription,
} from '../../src/modules/audience/topics/topics.service.js';
import {
  defaultSubscriptionOf,
  requestedDefault,
  subscribedByDefault,
  topicDefaultOf,
} from '../../src/modules/audience/topics/default-subscription.js';

describe('a topic’s default subscription', function () {
  context('from Resend’s defaultSubscription', function () {
    it('reads opt_in as subscribed and opt_out as unsubscribed (the state a contact starts in)', function () {
      expect(fromResendDefaultSubscription('opt_in')).to.equal('subscribed');
      expect(fromResendDefaultSubscription('opt_out')).to.equal('unsubscribed');
    });
  });

  context('to Resend’s defaultSubscription', function () {
    it('writes subscribed as opt_in and unsubscribed as opt_out, and comes back unchanged', function () {
      expect(toResendDefaultSubscription('subscribed')).to.equal('opt_in');
      expect(toResendDefaultSubscription('unsubscribed')).to.equal('opt_out');
      for (const r of ['opt_in', 'opt_out'] as const)
        expect(toResendDefaultSubscription(fromResendDefaultSubscription(r))).to.equal(r);
    });
  });

  context('in the deprecated default’s words', function () {
    it('are the opposite of Resend’s: opt_in is unsubscribed, opt_out is subscribed', function () {
      expect(defaultSubscriptionOf('opt_in')).to.equal('unsubscribed');
      expect(defaultSubscriptionOf('opt_out')).to.equal('subscribed');
      expect(topicDefaultOf('subscribed')).to.equal('opt_out');
      expect(topicDefaultOf('unsubscribed')).to.equal('opt_in');
      expect(subscribedByDefault('opt_out')).to.equal(true);
      expect(subscribedByDefault('opt_in')).to.equal(false);
    });
  });

  context('asked for by a request', function () {
    const refusal = (body: Parameters<typeof requestedDefault>[0]) => thrownApiError(() => requestedDefault(body));

    it('takes default_subscription, the deprecated default, or both when they agree', function () {
      expect(requestedDefault({ default_subscription: 'subscribed' })).to.equal('opt_out');
      expect(requestedDefault({ default_subscription: 'unsubscribed' })).to.equal('opt_in');
      expect(requestedDefault({ default: 'opt_in' })).to.equal('opt_in');
      expect(requestedDefault({ default: 'opt_out', default_subscription: 'subscribed' })).to.equal('opt_out');
    });

    it('refuses both when they disagree, and neither, naming default_subscription', function () {
      for (const body of [{ default: 'opt_in', default_subscription: 'subscribed' }, {}] as const) {
        const e = refusal(body);
        expect(e).to.be.instanceOf(ApiError);
        expect(e).to.include({ status: 400, code: 'validation_error', field: 'default_subscription' });
      }
    });
  });
});
