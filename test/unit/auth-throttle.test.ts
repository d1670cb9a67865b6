import { expect } from 'chai';
import { AuthThrottle } from '../../src/lib/auth-throttle.js';
import { TtlCache } from '../../src/lib/ttl-cache.js';

describe('AuthThrottle (limits.auth_failures_per_ip over limits.auth_failure_window)', function () {
  const WINDOW = 15 * 60_000;
  let now: number;
  let throttle: AuthThrottle;
  beforeEach(function () {
    now = 1_000_000;
    throttle = new AuthThrottle({ failuresPerIp: 3, windowMs: WINDOW }, { now: () => now });
  });

  const failTimes = (ip: string, n: number) => {
    for (let i = 0; i < n; i++) throttle.failed(ip);
  };

  it('lets an address try until it has failed failuresPerIp times, then refuses it for whole seconds', function () {
    failTimes('192.0.2.1', 2);
    expect(throttle.refusedFor('192.0.2.1')).to.equal(null);
    throttle.failed('192.0.2.1');
    // one try comes back every window / failuresPerIp: 300 s
    expect(throttle.refusedFor('192.0.2.1')).to.equal(300);
  });

  it('counts nothing when asked: a refused address asking again does not wait longer', function () {
    failTimes('192.0.2.1', 3);
    for (let i = 0; i < 50; i++) expect(throttle.refusedFor('192.0.2.1')).to.equal(300);
    expect(throttle.refusedFor('192.0.2.9')).to.equal(null);
  });

  context('when time passes on the injected clock', function () {
    it('gives one try back after Retry-After, and every try back after the window', function () {
      failTimes('192.0.2.1', 3);
      now += 299_000;
      expect(throttle.refusedFor('192.0.2.1')).to.equal(1);
      now += 1000;
      expect(throttle.refusedFor('192.0.2.1')).to.equal(null);
      throttle.failed('192.0.2.1');
      expect(throttle.refusedFor('192.0.2.1')).to.equal(300);
      now += WINDOW;
      failTimes('192.0.2.1', 2);
      expect(throttle.refusedFor('192.0.2.1')).to.equal(null);
    });
  });

  it('keeps addresses apart, an IPv4 address mapped into IPv6 as itself and an IPv6 client by its /64', function () {
    failTimes('192.0.2.1', 3);
    expect(throttle.refusedFor('::ffff:192.0.2.1')).to.equal(300);
    expect(throttle.refusedFor('192.0.2.2')).to.equal(null);
    failTimes('2001:db8:1:2::1', 2);
    throttle.failed('2001:db8:1:2:ffff::9');
    expect(throttle.refusedFor('2001:db8:1:2::77')).to.equal(300);
    expect(throttle.refusedFor('2001:db8:1:3::1')).to.equal(null);
  });
});

// KeyAuthenticator.known peeks the key cache: a key seen succeed passes a refused address.
describe('TtlCache.peek (the key cache as KeyAuthenticator.known reads it)', function () {
  let now = 1000;
  const clock = () => now;

  it('answers the last kept value without loading, however old, and nothing for a key never loaded', async function () {
    let loads = 0;
    const c = new TtlCache<string | null>(200, (v) => v !== null, clock);
    expect(c.peek('k')).to.equal(undefined);
    await c.get('k', async () => (++loads, 'principal'));
    now += 60_000;
    expect(c.peek('k')).to.equal('principal');
    expect(loads).to.equal(1);
  });

  it('answers nothing for a value keep refused, or once a reload refuses it (a key revoked since)', async function () {
    const c = new TtlCache<string | null>(200, (v) => v !== null, clock);
    await c.get('unknown', async () => null);
    expect(c.peek('unknown')).to.equal(undefined);
    await c.get('k', async () => 'principal');
    now += 1000;
    let reloaded!: (v: string | null) => void;
    const reload = c.get('k', () => new Promise<string | null>((r) => (reloaded = r)));
    // while the reload runs the previous value still answers
    expect(c.peek('k')).to.equal('principal');
    reloaded(null);
    await reload;
    expect(c.peek('k')).to.equal(undefined);
  });

  it('still answers after expireAll (a key or project changed in this process), which makes the next get load again', async function () {
    let loads = 0;
    const c = new TtlCache<string>(200, () => true, clock);
    await c.get('k', async () => `v${++loads}`);
    c.expireAll();
    expect(c.peek('k')).to.equal('v1');
    expect(await c.get('k', async () => `v${++loads}`)).to.equal('v2');
    expect(c.peek('k')).to.equal('v2');
  });

  it('forgets on delete and clear', async function () {
    const c = new TtlCache<string>(200, () => true, clock);
    await c.get('a', async () => 'A');
    await c.get('b', async () => 'B');
    c.delete('a');
    expect(c.peek('a')).to.equal(undefined);
    expect(c.peek('b')).to.equal('B');
    c.clear();
    expect(c.peek('b')).to.equal(undefined);
  });
});
