import { expect } from 'chai';
import { EndpointWindows } from '../../src/modules/notifying/webhooks/endpoint-windows.js';

describe('webhook endpoint windows (AIMD, issue 24)', function () {
  const settings = { initial: 4, max: 64, slowMs: 1000 };

  it('starts at the initial window and doubles per round of fast answers up to the ceiling', function () {
    const w = new EndpointWindows(settings);
    expect(w.limitOf('a')).to.equal(4);
    for (let i = 0; i < 4; i++) w.answered('a', true, 5);
    expect(w.limitOf('a')).to.equal(8);
    for (let i = 0; i < 8; i++) w.answered('a', true, 5);
    expect(w.limitOf('a')).to.equal(16);
    for (let i = 0; i < 500; i++) w.answered('a', true, 5);
    expect(w.limitOf('a')).to.equal(64);
    // another endpoint is its own
    expect(w.limitOf('b')).to.equal(4);
  });

  it('halves on each failure, down to one at a time, then grows by one per window once it has failed', function () {
    const w = new EndpointWindows(settings);
    for (let i = 0; i < 28; i++) w.answered('a', true, 5);
    expect(w.limitOf('a')).to.equal(32);
    w.answered('a', false, 5);
    expect(w.limitOf('a')).to.equal(16);
    for (let i = 0; i < 10; i++) w.answered('a', false, 5);
    expect(w.limitOf('a')).to.equal(1);
    for (let i = 0; i < 3; i++) w.answered('a', true, 5);
    // above its threshold (half a window) after the failures: +1 per window's worth, not doubling
    expect(w.limitOf('a')).to.be.at.most(3);
  });

  it('shrinks a slow endpoint back to the initial window, never below, and does not grow it', function () {
    const w = new EndpointWindows(settings);
    for (let i = 0; i < 60; i++) w.answered('slow', true, 5);
    expect(w.limitOf('slow')).to.equal(64);
    for (let i = 0; i < 10; i++) w.answered('slow', true, 2000);
    expect(w.limitOf('slow')).to.equal(4);
    w.forget('slow');
    expect(w.limitOf('slow')).to.equal(4);
  });
});
