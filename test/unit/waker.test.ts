import { expect } from 'chai';
import { Waker } from '../../src/lib/waker.js';

describe('Waker (the sleep of the queue and webhook loops)', function () {
  it('keeps a wake that came while the loop was busy: the next sleep returns at once', async function () {
    const w = new Waker();
    w.wake();
    const t = performance.now();
    await w.sleep(5000);
    expect(performance.now() - t).to.be.below(100);
  });

  it('cuts a sleep short', async function () {
    const w = new Waker();
    const t = performance.now();
    setTimeout(() => w.wake(), 20);
    await w.sleep(5000);
    expect(performance.now() - t).to.be.below(1000);
  });

  it('sleeps the whole time when nobody wakes it, and a kept wake counts once', async function () {
    const w = new Waker();
    w.wake();
    w.wake();
    await w.sleep(5000);
    const t = performance.now();
    await w.sleep(150);
    expect(performance.now() - t).to.be.at.least(140);
  });
});
