import { expect } from 'chai';
import {
  admit,
  answered,
  BULK_AFTER_MS,
  effectiveRate,
  MAX_WAIT_MS,
  newLane,
  PROBE_LOST_MS,
  PROBE_WAIT_MS,
  suspend,
  type Lane,
} from '../../src/mta/shaping/lane.js';
import { ProviderTable } from '../../src/mta/shaping/provider-table.js';

const lane = (maxMessagesPerMinute: number | null, now = 0): Lane =>
  newLane(
    {
      name: 'isp',
      known: true,
      limits: { maxConnections: 5, maxMessagesPerConnection: null, maxMessagesPerMinute },
    },
    '',
    now,
  );

describe('traffic shaping: one lane (provider, source IP)', function () {
  it('lets messages go at once when the provider has no rate', function () {
    const l = lane(null);
    for (let i = 0; i < 1000; i++) expect(admit(l, `m${i}`, 0)).to.deep.equal({ kind: 'go', waitMs: 0, probe: false });
  });

  it('spaces messages at the rate, with a second of burst, and sends longer waits back to the queue keeping their turn', function () {
    const l = lane(60); // one a second, a burst of one
    expect(admit(l, 'a', 0)).to.include({ kind: 'go', waitMs: 0 });
    expect(admit(l, 'b', 0)).to.include({ kind: 'go', waitMs: 1000 });
    expect(admit(l, 'c', 0)).to.include({ kind: 'go', waitMs: 2000 });
    const d = admit(l, 'd', 0);
    expect(d).to.include({ kind: 'hold', quiet: true, until: 3000 });
    // another message behind it gets a later turn; d coming back at its time goes at once
    expect(admit(l, 'e', 0)).to.include({ kind: 'hold', until: 4000 });
    expect(admit(l, 'd', 2999)).to.include({ kind: 'go', waitMs: 1 });
    // back far too early, it is held again for the same turn, not pushed behind e
    expect(admit(l, 'e', 100)).to.include({ kind: 'hold', until: 4000 });
    expect(MAX_WAIT_MS).to.equal(2000);
  });

  it('gives whole milliseconds even when the interval is not one (a queue row stores the time as an integer)', function () {
    const l = lane(7); // one every 8571.43 ms
    admit(l, 'a', 0);
    const held = admit(l, 'b', 0);
    expect(held).to.include({ kind: 'hold', until: 8572 });
    const c = admit(l, 'c', 1);
    expect(Number.isInteger((c as { until: number }).until)).to.equal(true);
  });

  it('allows a second of burst at higher rates', function () {
    const l = lane(600); // ten a second
    const waits = Array.from({ length: 12 }, (_, i) => admit(l, `m${i}`, 0));
    expect(waits.slice(0, 10).every((a) => a.kind === 'go' && a.waitMs === 0)).to.equal(true);
    expect(waits[10]).to.include({ kind: 'go', waitMs: 100 });
  });

  it('holds everything while suspended, then lets exactly one probe through and the rest wait for its answer', function () {
    const l = lane(600);
    suspend(l, '421 4.7.28 rate limited', 60_000, 1000);
    expect(l.state).to.equal('suspended');
    const held = admit(l, 'a', 30_000);
    expect(held).to.include({ kind: 'hold', until: 61_000, quiet: false });
    expect((held as { reason: string }).reason).to.contain('421 4.7.28 rate limited');
    expect(admit(l, 'a', 61_000)).to.deep.equal({ kind: 'go', waitMs: 0, probe: true });
    expect(admit(l, 'b', 61_001)).to.include({ kind: 'hold', quiet: true, until: 61_001 + PROBE_WAIT_MS });
    // an answer from another message in flight does not open it: only the probe's
    answered(l, true, false);
    expect(l.state).to.equal('probing');
    answered(l, true, true);
    expect(l.state).to.equal('open');
  });

  it('lets held transactional mail go before broadcast mail, whichever comes back first', function () {
    const l = lane(600);
    suspend(l, '421 4.7.28 rate limited', 60_000, 1000);
    // during the suspension: a receipt is held until its end, a newsletter a second after it
    expect(admit(l, 'receipt-1', 30_000)).to.include({ kind: 'hold', until: 61_000, quiet: false });
    expect(admit(l, 'news-1', 30_000, true)).to.include({ kind: 'hold', until: 61_000 + BULK_AFTER_MS, quiet: false });
    // the receipt probes; the next receipt waits for the probe's answer
    expect(admit(l, 'receipt-1', 61_000)).to.include({ kind: 'go', probe: true });
    expect(admit(l, 'receipt-2', 61_010)).to.include({ kind: 'hold', until: 61_010 + PROBE_WAIT_MS });
    // the newsletter, back first, waits behind the held receipt, and cannot become the probe
    expect(admit(l, 'news-1', 62_000, true)).to.deep.include({
      kind: 'hold',
      until: 61_010 + PROBE_WAIT_MS + BULK_AFTER_MS,
      quiet: true,
    });
    answered(l, true, true);
    expect(admit(l, 'receipt-2', 61_010 + PROBE_WAIT_MS)).to.include({ kind: 'go' });
    expect(admit(l, 'news-1', 61_010 + PROBE_WAIT_MS + BULK_AFTER_MS, true)).to.include({ kind: 'go' });
    // with nothing transactional held, broadcast mail goes at once
    const quiet = lane(null);
    expect(admit(quiet, 'news-2', 0, true)).to.include({ kind: 'go', waitMs: 0 });
  });

  it('lets another message probe when the probe never got an answer', function () {
    const l = lane(600);
    suspend(l, '421 4.7.28', 1000, 0);
    expect(admit(l, 'probe', 1000)).to.include({ kind: 'go', probe: true });
    expect(admit(l, 'b', 2000)).to.include({ kind: 'hold', quiet: true });
    expect(admit(l, 'b', 1000 + PROBE_LOST_MS)).to.include({ kind: 'go', probe: true });
  });

  it('starts again at half the limit after a suspension and climbs back one message a minute per accepted message', function () {
    const l = lane(600);
    suspend(l, '421 4.7.28', 1000, 0);
    expect(effectiveRate(l)).to.equal(300);
    admit(l, 'probe', 1000);
    answered(l, true, true);
    expect(effectiveRate(l)).to.equal(300);
    for (let i = 0; i < 100; i++) answered(l, true, false);
    expect(effectiveRate(l)).to.equal(400);
    // a refusal that is not a throttle does not add
    answered(l, false, false);
    expect(effectiveRate(l)).to.equal(400);
    for (let i = 0; i < 200; i++) answered(l, true, false);
    expect(effectiveRate(l)).to.equal(600);
    expect(l.rate).to.equal(null);
  });

  it('halves the rate again at each further throttle (multiplicative decrease)', function () {
    const l = lane(600);
    suspend(l, '421 4.7.28', 1000, 0);
    admit(l, 'probe', 1000);
    answered(l, true, true);
    suspend(l, '421 4.7.28', 1000, 2000);
    expect(effectiveRate(l)).to.equal(150);
    admit(l, 'probe', 3000);
    suspend(l, '421 4.7.28', 1000, 3100); // the probe itself throttled
    expect(effectiveRate(l)).to.equal(75);
    expect(l.until).to.equal(4100);
  });

  it('gives a provider without a limit a ceiling from the pace it was throttled at', function () {
    const l = lane(null);
    for (let i = 0; i < 500; i++) admit(l, `m${i}`, i * 100); // 600 a minute for 50 s
    suspend(l, '421 too many', 1000, 50_000);
    expect(l.ceiling).to.be.within(500, 600);
    expect(effectiveRate(l)).to.equal(Math.floor(l.ceiling! / 2));
    admit(l, 'probe', 51_000);
    answered(l, true, true);
    for (let i = 0; i < 400; i++) answered(l, true, false);
    // back at the ceiling: no limit again
    expect(effectiveRate(l)).to.equal(null);
  });

  it('keeps the longer of two suspensions', function () {
    const l = lane(null);
    suspend(l, 'first', 60_000, 0);
    suspend(l, 'second', 1000, 10);
    expect(l.until).to.equal(60_000);
    expect(l.reason).to.equal('first');
  });
});

describe('traffic shaping: the provider table', function () {
  const table = new ProviderTable(
    [
      { name: 'example-isp', mxSuffixes: ['.mx.example-isp.net'], maxConnections: 10, maxMessagesPerMinute: 600 },
      { name: 'google', mxSuffixes: ['.google.com', '.googlemail.com'], maxConnections: 3 },
    ],
    [{ provider: 'example-isp', replyPattern: '4\\.7\\.28|rate limit', suspendForMs: 600_000 }],
    5,
  );

  it('finds the provider of an MX host by the longest suffix, whole labels only', function () {
    expect(table.of('in1.mx.example-isp.net').name).to.equal('example-isp');
    expect(table.of('IN1.MX.EXAMPLE-ISP.NET.').name).to.equal('example-isp');
    // not a label boundary: another provider
    expect(table.of('in1.evilmx.example-isp.net').name).to.equal('example-isp.net');
    expect(table.of('eur.olc.protection.outlook.com').name).to.equal('outlook');
    expect(table.of('contoso-com.mail.protection.outlook.com').name).to.equal('microsoft365');
  });

  it('lets outbound.providers override a built-in entry by name, keeping what it does not set', function () {
    const g = table.of('gmail-smtp-in.l.google.com');
    expect(g.name).to.equal('google');
    expect(g.limits.maxConnections).to.equal(3);
    expect(g.known).to.equal(true);
  });

  it('makes an MX host in no provider its own provider, named after its registrable domain, with the old per-destination limits', function () {
    const a = table.of('mx1.small-isp.co.uk');
    const b = table.of('mx2.small-isp.co.uk');
    expect(a.name).to.equal('small-isp.co.uk');
    expect(b.name).to.equal(a.name);
    expect(a.known).to.equal(false);
    expect(a.limits).to.deep.equal({ maxConnections: 5, maxMessagesPerConnection: null, maxMessagesPerMinute: null });
    expect(table.of('127.0.0.1').name).to.equal('127.0.0.1');
  });

  it('checks outbound.backoff rules before the built-in ones, each for its provider', function () {
    expect(table.throttleOf('example-isp', '451 4.7.1 rate limit exceeded')?.suspendForMs).to.equal(600_000);
    expect(table.throttleOf('other.net', '451 4.7.1 rate limit exceeded')?.label ?? null).to.not.contain(
      'outbound.backoff',
    );
    expect(table.throttleOf('google', '421 4.7.28 [1.2.3.4] Our system has detected an unusual rate')).to.not.equal(
      null,
    );
    expect(table.throttleOf('google', '550 5.1.1 The email account that you tried to reach does not exist')).to.equal(
      null,
    );
  });
});
