import { expect } from 'chai';
import { mtaStatus } from '../../src/modules/deliverability/shaping/mta-status.service.js';
import {
  addIpDays,
  addLaneMinutes,
  saveIpFirstUse,
  saveLanes,
  saveRoutes,
  suspendedLanes,
} from '../../src/modules/deliverability/shaping/shaping.repo.js';
import { pruneShapingState } from '../../src/modules/deliverability/shaping/shaping.service.js';
import { eachDatabase } from '../helpers/databases.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

// The traffic-shaping state as stored (what `posthorn mta status`, /metrics and other nodes read):
// counts add up across flushes and nodes, suspensions are found while they last, and the prune
// job forgets old rows but not a suspension still in force.
eachDatabase('traffic shaping: the stored state', (db) => {
  const now = Date.UTC(2026, 10, 30, 12, 0, 0);
  const minute = Math.floor(now / 60_000);

  it('adds outcome counts of the same minute together and shows the last hour per lane', async function () {
    const { store } = db();
    const lane = { provider: 'google', sourceIp: '', minute, delivered: 3, deferred: 1, bounced: 0, throttled: 0 };
    await store.tx((trx) => addLaneMinutes(trx, [lane]));
    // another flush (or node) in the same minute, and one two hours ago
    await store.tx((trx) =>
      addLaneMinutes(trx, [
        { ...lane, delivered: 2, throttled: 1 },
        { ...lane, minute: minute - 120, delivered: 50 },
      ]),
    );
    await store.tx((trx) =>
      saveLanes(trx, [
        {
          provider: 'google',
          sourceIp: '',
          known: true,
          state: 'suspended',
          untilAt: now + 10 * 60_000,
          reason: '421 4.7.28 slow down',
          ratePerMinute: 300,
          updatedAt: now,
        },
      ]),
    );
    await store.tx((trx) => saveRoutes(trx, [{ route: 'gmail.com', provider: 'google' }], now));
    const { providers } = await mtaStatus(store, now);
    expect(providers).to.have.length(1);
    expect(providers[0]).to.deep.include({
      name: 'google',
      source_ip: null,
      state: 'suspended',
      until: new Date(now + 10 * 60_000).toISOString(),
      rate_per_minute: 300,
      last_hour: { delivered: 5, deferred: 2, bounced: 0, throttled: 1 },
    });
    expect((await suspendedLanes(store.reader, now)).map((l) => l.provider)).to.deep.equal(['google']);
    // once the suspension has run out it is no longer one, and the status says open
    expect(await suspendedLanes(store.reader, now + HOUR)).to.deep.equal([]);
    expect((await mtaStatus(store, now + HOUR)).providers[0].state).to.equal('open');
  });

  it('keeps a suspension in force when another node writes the lane as open, and takes a later one', async function () {
    const { store } = db();
    const lane = (state: 'open' | 'suspended', untilAt: number | null, reason: string | null) => ({
      provider: 'yahoo',
      sourceIp: '203.0.113.9',
      known: true,
      state,
      untilAt,
      reason,
      ratePerMinute: null,
      updatedAt: now,
    });
    await store.tx((trx) => saveLanes(trx, [lane('suspended', now + 60_000, '[TSS04]')], now));
    await store.tx((trx) => saveLanes(trx, [lane('open', null, null)], now + 1000));
    await store.tx((trx) => saveLanes(trx, [lane('suspended', now + 30_000, 'shorter')], now + 1000));
    let stored = (await suspendedLanes(store.reader, now + 1000)).filter((l) => l.provider === 'yahoo');
    expect(stored.map((l) => [l.untilAt, l.reason])).to.deep.equal([[now + 60_000, '[TSS04]']]);
    await store.tx((trx) => saveLanes(trx, [lane('suspended', now + 120_000, '[TSS09]')], now + 2000));
    stored = (await suspendedLanes(store.reader, now + 2000)).filter((l) => l.provider === 'yahoo');
    expect(stored.map((l) => [l.untilAt, l.reason])).to.deep.equal([[now + 120_000, '[TSS09]']]);
    // once it has run out, the lane is written as it is again
    await store.tx((trx) => saveLanes(trx, [lane('open', null, null)], now + 130_000));
    expect((await suspendedLanes(store.reader, now)).filter((l) => l.provider === 'yahoo')).to.deep.equal([]);
    await store.knex('mta_lanes').where('provider', 'yahoo').delete();
  });

  it('forgets old minutes, warm-up days, lanes and routes, but not a suspension still in force', async function () {
    const { store } = db();
    await store.tx(async (trx) => {
      await saveLanes(trx, [
        {
          provider: 'stale.example',
          sourceIp: '',
          known: false,
          state: 'open',
          untilAt: null,
          reason: null,
          ratePerMinute: null,
          updatedAt: now - 40 * DAY,
        },
        {
          provider: 'long.example',
          sourceIp: '',
          known: false,
          state: 'suspended',
          untilAt: now + DAY,
          reason: '554 blocked',
          ratePerMinute: 1,
          updatedAt: now - 40 * DAY,
        },
      ]);
      await saveRoutes(trx, [{ route: 'stale.example', provider: 'stale.example' }], now - 40 * DAY);
      await saveIpFirstUse(trx, [{ address: '192.0.2.1', firstUsedAt: now - 90 * DAY }]);
      await addIpDays(trx, [
        { sourceIp: '192.0.2.1', provider: 'google', day: Math.floor(now / DAY) - 70, sent: 10 },
        { sourceIp: '192.0.2.1', provider: 'google', day: Math.floor(now / DAY), sent: 7 },
      ]);
    });
    const deleted = await pruneShapingState(store, now);
    // the stale lane, its route and the warm-up day of 70 days ago
    expect(deleted).to.equal(3);
    const lanes = await store.reader('mta_lanes').select('provider').orderBy('provider');
    expect(lanes.map((l: { provider: string }) => l.provider)).to.deep.equal(['google', 'long.example']);
    expect(await store.reader('mta_routes').where('route', 'stale.example')).to.deep.equal([]);
    const days = await store.reader('mta_ip_days').select('sent');
    expect(days.map((d: { sent: number | string }) => Number(d.sent))).to.deep.equal([7]);
    // the first test's minute rows are within 25 hours: kept
    expect(Number((await store.reader('mta_lane_minutes').count({ n: '*' }))[0].n)).to.equal(2);
  });
});
