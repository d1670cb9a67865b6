import { expect } from 'chai';
import { setProject } from '../../src/modules/account/projects/projects.service.js';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { expectError } from '../helpers/assert.js';
import { startDnsWorld, type DnsWorld } from '../helpers/dns-world.js';

eachDatabase('usage route (CONTRACT §5, issue 23)', (db) => {
  let api: TestApi;
  let world: DnsWorld;
  before(async function () {
    world = await startDnsWorld();
    world.add('ok.test', 'MX', { exchange: 'mx.ok.test', priority: 10 });
    api = await startTestApi(db().store, { dns: { resolvers: [world.address] } });
  });
  after(async function () {
    await api.stop();
    await world.stop();
  });

  it('counts live recipients today and this month and verifications this month, beside the limits; test sends cost nothing', async function () {
    const t = await api.tenant({ mode: 'live' });
    const empty = await t.api.get('/v1/usage');
    expect(empty.status).to.equal(200);
    expect(empty.body).to.deep.equal({
      object: 'usage',
      sent_today: 0,
      sent_this_month: 0,
      broadcast_today: 0,
      broadcast_this_month: 0,
      verifications_used: 0,
      limits: { daily: 0, monthly: 0, domains: 0, verifications: 0 },
    });

    const domain = `usage-${Date.now()}.example`;
    await api.deps.store.knex('domains').insert({
      id: `dom_${Date.now().toString(36).padStart(26, '0')}`,
      project_id: t.project.id,
      name: domain,
      status: 'verified',
      dkim_token: `tok${Date.now()}`,
      active_selector: 'ph1',
      created_at: Date.now(),
      updated_at: Date.now(),
    });
    await setProject(api.deps, t.project.id, { limits: { daily: 100, monthly: 1000, verifications: 50 } });
    expect(
      (
        await t.api.post('/v1/emails', {
          from: `a@${domain}`,
          to: ['a@example.test', 'b@example.test'],
          cc: ['c@example.test'],
          subject: 's',
          text: 't',
        })
      ).status,
    ).to.equal(202);
    const test = await t.newKey({ mode: 'test' });
    expect(
      (await test.api.post('/v1/emails', { from: 'a@example.test', to: ['x@example.test'], subject: 's', text: 't' }))
        .status,
    ).to.equal(202);
    expect((await t.api.post('/v1/verify', { email: 'someone@ok.test' })).status).to.equal(200);

    const used = await t.api.get('/v1/usage');
    expect(used.body).to.deep.equal({
      object: 'usage',
      sent_today: 3,
      sent_this_month: 3,
      broadcast_today: 0,
      broadcast_this_month: 0,
      verifications_used: 1,
      limits: { daily: 100, monthly: 1000, domains: 0, verifications: 50 },
    });
    // another project's usage is its own
    const other = await api.tenant({ mode: 'live' });
    expect((await other.api.get('/v1/usage')).body.sent_today).to.equal(0);
  });

  it('needs the usage:read scope', async function () {
    const t = await api.tenant({ scopes: ['emails:send'] });
    expectError(await t.api.get('/v1/usage'), 403, 'forbidden');
    expectError(await api.anonymous.get('/v1/usage'), 401, 'unauthorized');
  });
});
