import { expect } from 'chai';
import { TtlCache } from '../../src/lib/ttl-cache.js';

describe('TtlCache (MX answers, From domains, API keys)', function () {
  let now = 1000;
  const clock = () => now;

  it('loads once within the TTL, shares a load in progress, and loads again after it', async function () {
    let loads = 0;
    const c = new TtlCache<number>(200, () => true, clock);
    const load = async () => ++loads;
    expect(await Promise.all([c.get('a', load), c.get('a', load)])).to.deep.equal([1, 1]);
    now += 199;
    expect(await c.get('a', load)).to.equal(1);
    now += 1;
    expect(await c.get('a', load)).to.equal(2);
    expect(await c.get('a', load, true)).to.equal(3);
  });

  it('keeps neither refused values nor failed loads', async function () {
    let loads = 0;
    const c = new TtlCache<number | null>(10_000, (v) => v !== null, clock);
    await c.get('k', async () => (++loads, null));
    await c.get('k', async () => (++loads, null));
    await c.get('e', () => Promise.reject(new Error('down'))).catch(() => undefined);
    expect(await c.get('e', async () => 7)).to.equal(7);
    expect(loads).to.equal(2);
  });
});
