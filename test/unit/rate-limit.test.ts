import { expect } from 'chai';
import { clientKey, RateLimiter } from '../../src/lib/rate-limiter.js';

describe('RateLimiter', function () {
  const clockAt = (t: { now: number }) => ({ now: () => t.now });

  it("lets a burst of one second's worth through, then asks to wait", function () {
    const t = { now: 0 };
    const rl = new RateLimiter(5, clockAt(t));
    for (let i = 0; i < 5; i++) expect(rl.take('k')).to.equal(null);
    expect(rl.take('k')).to.equal(1);
  });

  it('refills at the configured rate', function () {
    const t = { now: 0 };
    const rl = new RateLimiter(2, clockAt(t));
    rl.take('k');
    rl.take('k');
    expect(rl.take('k')).to.not.equal(null);
    t.now = 500;
    expect(rl.take('k')).to.equal(null);
    expect(rl.take('k')).to.not.equal(null);
  });

  it('answers whole seconds, rounded up, for slow rates', function () {
    const t = { now: 0 };
    const rl = new RateLimiter(0.2, clockAt(t));
    expect(rl.take('k')).to.equal(null);
    expect(rl.take('k')).to.equal(5);
  });

  it('keeps keys apart', function () {
    const t = { now: 0 };
    const rl = new RateLimiter(1, clockAt(t));
    expect(rl.take('a')).to.equal(null);
    expect(rl.take('a')).to.not.equal(null);
    expect(rl.take('b')).to.equal(null);
  });

  context('its memory', function () {
    it('keeps at most maxBuckets, forgetting the least recently used', function () {
      const t = { now: 0 };
      const rl = new RateLimiter(1 / 3600, clockAt(t), 1, 3);
      for (const k of ['a', 'b', 'c']) expect(rl.take(k)).to.equal(null);
      // a used again: b is now the least recently used, and goes when d comes
      expect(rl.take('a')).to.not.equal(null);
      expect(rl.take('d')).to.equal(null);
      expect(rl.size).to.equal(3);
      expect(rl.take('a'), 'a is remembered').to.not.equal(null);
      expect(rl.take('c'), 'c is remembered').to.not.equal(null);
      expect(rl.take('b'), 'b was forgotten: it starts full').to.equal(null);
    });

    it('drops the buckets that have refilled as it goes, without waiting for a refusal', function () {
      const t = { now: 0 };
      const rl = new RateLimiter(10 / 3600, clockAt(t), 10);
      for (let i = 0; i < 1000; i++) expect(rl.take(`ip${i}`)).to.equal(null);
      expect(rl.size).to.equal(1000);
      t.now = 3_600_000;
      expect(rl.take('late')).to.equal(null);
      expect(rl.size).to.equal(1);
    });

    it('keeps a bucket that has not refilled yet, and refills nothing when the clock steps back', function () {
      const t = { now: 10_000 };
      const rl = new RateLimiter(1, clockAt(t), 2);
      rl.take('k');
      rl.take('k');
      t.now = 1_000;
      expect(rl.take('k')).to.equal(1);
      t.now = 2_000;
      expect(rl.take('k')).to.equal(null);
    });

    it('answers wait() without taking a token or keeping a bucket', function () {
      const t = { now: 0 };
      const rl = new RateLimiter(1, clockAt(t), 1);
      expect(rl.wait('k')).to.equal(null);
      expect(rl.size).to.equal(0);
      expect(rl.take('k')).to.equal(null);
      expect(rl.wait('k')).to.equal(1);
      expect(rl.size).to.equal(1);
    });
  });

  context('clientKey', function () {
    it('keys an IPv6 client by its /64 and an IPv4 one (also mapped into IPv6) by its address', function () {
      for (const [ip, key] of [
        ['192.0.2.7', '192.0.2.7'],
        ['::ffff:192.0.2.7', '192.0.2.7'],
        ['::FFFF:127.0.0.1', '127.0.0.1'],
        ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
        ['2001:0db8:0001:0002::7', '2001:db8:1:2::/64'],
        ['2001:db8:1:2::', '2001:db8:1:2::/64'],
        ['2001:db8::1', '2001:db8:0:0::/64'],
        ['2001:DB8:0:0:ffff::1', '2001:db8:0:0::/64'],
        ['::1', '0:0:0:0::/64'],
        ['fe80::1%eth0', 'fe80:0:0:0::/64'],
      ]) {
        expect(clientKey(ip), ip).to.equal(key);
      }
      expect(clientKey('2001:db8:1:3::1')).to.not.equal(clientKey('2001:db8:1:2::1'));
    });
  });
});
