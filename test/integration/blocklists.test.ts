import { expect } from 'chai';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { startHookWorld, type HookWorld } from '../helpers/hook-world.js';
import { verifiedDomain } from '../helpers/live.js';
import { expectError } from '../helpers/assert.js';
import { waitFor } from '../helpers/wait.js';
import { blocklistChecker, checkBlocklists } from '../../src/modules/deliverability/blocklists/blocklists.service.js';
import { systemClock } from '../../src/lib/time.js';

const LISTS = [
  { zone: 'ip.bl.test', kind: 'ip', name: 'Test IP list' },
  { zone: 'dbl.bl.test', kind: 'domain', name: 'Test domain list' },
];
const IP = '192.0.2.10';

// The blocklist_check job's work against lists served by the loopback DNS world (docs/blocklists.md).
eachDatabase('blocklist monitoring (GET /v1/blocklists, domain.blocklisted / domain.delisted)', (db) => {
  let hw: HookWorld;
  let api: TestApi;
  let t: Tenant;
  let other: Tenant;
  // a checker of its own for each run: the job's keeps answers for their TTL (at least 5 minutes)
  const check = () => checkBlocklists(api.deps, blocklistChecker([hw.world.address], systemClock, 200));

  before(async function () {
    hw = await startHookWorld();
    api = await startTestApi(
      db().store,
      { ...hw.config(), blocklists: { lists: LISTS, ips: [IP] } },
      { roles: { webhooks: true } },
    );
    t = await api.tenant();
    other = await api.tenant();
  });
  after(async function () {
    await api.stop();
    await hw.stop();
  });

  it('reports each list’s answer, emits an event to subscribed endpoints when a listing starts and ends, and warns in insights', async function () {
    const d = await verifiedDomain(t, hw.world, {}, true);
    const od = await verifiedDomain(other, hw.world, {}, true);
    for (const [tenant, path] of [
      [t, '/ok/bl-mine'],
      [other, '/ok/bl-other'],
    ] as const) {
      expect(
        (
          await tenant.api.post('/v1/webhooks', {
            url: hw.hooks.url(path),
            events: ['domain.blocklisted', 'domain.delisted'],
          })
        ).status,
      ).to.equal(201);
    }
    // an endpoint that names no events gets none of these (CONTRACT §5)
    await t.api.post('/v1/webhooks', { url: hw.hooks.url('/ok/bl-default') });

    const clear = await check();
    expect(clear).to.deep.include({ listed: 0, errors: 0, newlyListed: 0 });
    const mine = (await t.api.get('/v1/blocklists')).body;
    expect(mine.object).to.equal('list');
    expect(
      mine.data.map((c: { target: string; list: string; state: string }) => `${c.target} ${c.list} ${c.state}`),
    ).to.deep.equal([`${d.domain} dbl.bl.test clear`, `${IP} ip.bl.test clear`]);

    hw.world.add(`${d.domain}.dbl.bl.test`, 'A', '127.0.0.2');
    hw.world.add(`${d.domain}.dbl.bl.test`, 'TXT', 'listed for sending spam, see https://bl.test/lookup');
    hw.world.add('10.2.0.192.ip.bl.test', 'A', '127.0.0.3');
    const listed = await check();
    expect(listed).to.deep.include({ listed: 2, newlyListed: 2, delisted: 0 });

    const got = (path: string) =>
      hw.hooks.to(path).map((r) => r.json as { type: string; data: Record<string, unknown> });
    await waitFor(
      async () => (got('/ok/bl-mine').length === 2 && got('/ok/bl-other').length === 1) || null,
      10_000,
      'the blocklisted events',
    );
    const events = got('/ok/bl-mine').sort((a, b) => String(a.data.kind).localeCompare(String(b.data.kind)));
    expect(events.map((e) => e.type)).to.deep.equal(['domain.blocklisted', 'domain.blocklisted']);
    expect(events[0].data).to.deep.equal({
      target: d.domain,
      kind: 'domain',
      list: 'dbl.bl.test',
      list_name: 'Test domain list',
      codes: ['127.0.0.2'],
      reason: 'listed for sending spam, see https://bl.test/lookup',
    });
    expect(events[1].data).to.include({ target: IP, kind: 'ip', list: 'ip.bl.test' });
    // the other project sends from the same IP, but learns nothing of this project's domain
    expect(got('/ok/bl-other').map((e) => e.data.target)).to.deep.equal([IP]);

    const now = (await t.api.get('/v1/blocklists')).body.data;
    const domainCheck = now.find((c: { target: string }) => c.target === d.domain);
    expect(domainCheck).to.include({
      object: 'blocklist_check',
      kind: 'domain',
      list: 'dbl.bl.test',
      list_name: 'Test domain list',
      state: 'listed',
      listed: true,
    });
    expect(Date.parse(domainCheck.since)).to.be.closeTo(Date.now(), 10_000);
    const theirs = (await other.api.get('/v1/blocklists')).body.data.map((c: { target: string }) => c.target);
    expect(theirs).to.include(od.domain).and.not.include(d.domain);

    const insights = (await t.api.get(`/v1/domains/${d.id}/insights`)).body;
    expect(insights.setup.blocklisted.map((b: { target: string }) => b.target).sort()).to.deep.equal(
      [IP, d.domain].sort(),
    );
    const warning = insights.recommendations.find((r: { code: string }) => r.code === 'blocklisted');
    expect(warning.level).to.equal('warning');
    expect(warning.detail).to.include(`${d.domain} on dbl.bl.test`);
    expect(insights.status).to.not.equal('healthy');

    // the same answer again changes nothing and emits nothing
    expect(await check()).to.deep.include({ newlyListed: 0, delisted: 0 });

    hw.world.remove(`${d.domain}.dbl.bl.test`);
    const delisted = await check();
    expect(delisted).to.deep.include({ listed: 1, delisted: 1 });
    await waitFor(async () => got('/ok/bl-mine').length === 3 || null, 10_000, 'the delisted event');
    expect(got('/ok/bl-mine')[2]).to.deep.include({ type: 'domain.delisted' });
    expect(got('/ok/bl-mine')[2].data).to.include({ target: d.domain, list: 'dbl.bl.test' });
    expect(
      (await t.api.get('/v1/blocklists')).body.data.find((c: { target: string }) => c.target === d.domain),
    ).to.include({ state: 'clear', listed: false });
    expect(
      hw.hooks.to('/ok/bl-default').filter((r) => String((r.json as { type: string }).type).startsWith('domain.')),
    ).to.deep.equal([]);
    hw.world.remove('10.2.0.192.ip.bl.test');
    await check();
  });

  it('needs domains:manage', async function () {
    const k = await t.newKey({ scopes: ['emails:send'] });
    expectError(await k.api.get('/v1/blocklists'), 403, 'forbidden');
    expectError(await api.anonymous.get('/v1/blocklists'), 401, 'unauthorized');
  });
});
