import { expect } from 'chai';
import { EndpointWindows, signalOf } from '../../src/modules/notifying/webhooks/endpoint-windows.js';

describe('webhook endpoint windows (AIMD, issue 24)', function () {
  const settings = { initial: 4, max: 64, slowMs: 1000 };

  it('starts at the initial window and doubles per round of fast answers up to the ceiling', function () {
    const w = new EndpointWindows(settings);
    expect(w.limitOf('a')).to.equal(4);
    for (let i = 0; i < 4; i++) w.answered('a', 'ok', 5);
    expect(w.limitOf('a')).to.equal(8);
    for (let i = 0; i < 8; i++) w.answered('a', 'ok', 5);
    expect(w.limitOf('a')).to.equal(16);
    for (let i = 0; i < 500; i++) w.answered('a', 'ok', 5);
    expect(w.limitOf('a')).to.equal(64);
    // another endpoint is its own
    expect(w.limitOf('b')).to.equal(4);
  });

  it('halves on each sign of overload, down to one at a time, then grows by one per window once it has failed', function () {
    const w = new EndpointWindows(settings);
    for (let i = 0; i < 28; i++) w.answered('a', 'ok', 5);
    expect(w.limitOf('a')).to.equal(32);
    w.answered('a', 'overloaded', 5);
    expect(w.limitOf('a')).to.equal(16);
    for (let i = 0; i < 10; i++) w.answered('a', 'overloaded', 5);
    expect(w.limitOf('a')).to.equal(1);
    for (let i = 0; i < 3; i++) w.answered('a', 'ok', 5);
    // above its threshold (half a window) after the failures: +1 per window's worth, not doubling
    expect(w.limitOf('a')).to.be.at.most(3);
  });

  it('shrinks a slow endpoint back to the initial window, never below, and does not grow it', function () {
    const w = new EndpointWindows(settings);
    for (let i = 0; i < 60; i++) w.answered('slow', 'ok', 5);
    expect(w.limitOf('slow')).to.equal(64);
    for (let i = 0; i < 10; i++) w.answered('slow', 'ok', 2000);
    expect(w.limitOf('slow')).to.equal(4);
    w.forget('slow');
    expect(w.limitOf('slow')).to.equal(4);
  });

  it('reads overload from timeouts, lost connections, 408, 429, 502, 503 and 504 only', function () {
    expect([null, 408, 429, 502, 503, 504].map(signalOf)).to.deep.equal(Array(6).fill('overloaded'));
    expect([200, 202, 204, 299].map(signalOf)).to.deep.equal(Array(4).fill('ok'));
    expect([500, 501, 400, 404, 410, 301].map(signalOf)).to.deep.equal(Array(6).fill('neutral'));
  });

  it('keeps its window when an endpoint answers one event in twenty with a prompt 500', function () {
    const w = new EndpointWindows(settings);
    for (let i = 1; i <= 400; i++) w.answered('a', i % 20 === 0 ? signalOf(500) : 'ok', 20);
    expect(w.limitOf('a')).to.equal(64);
    // the same share of 503s is overload: the window stays small
    const busy = new EndpointWindows(settings);
    for (let i = 1; i <= 400; i++) busy.answered('b', i % 20 === 0 ? signalOf(503) : 'ok', 20);
    expect(busy.limitOf('b')).to.be.below(16);
  });
});
