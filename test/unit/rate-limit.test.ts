import { expect } from 'chai';
import { RateLimiter } from '../../src/lib/rate-limiter.js';

describe('RateLimiter', function () {
  const clockAt = (t: { now: number }) => ({ now: () => t.now });

  it('lets a burst of one second\'s worth through, then asks to wait', function () {
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
});
