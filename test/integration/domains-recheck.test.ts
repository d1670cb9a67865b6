import { expect } from 'chai';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { startDnsWorld, type DnsWorld } from '../helpers/dns-world.js';
import { waitFor } from '../helpers/wait.js';

interface Rec {
  required: boolean;
  type: 'CNAME' | 'MX' | 'TXT';
  name: string;
  value: string;
}

// The jobs role as `serve` runs it, with the re-check every second (node-cron's
// optional seconds field) so that the test sees several runs.
eachDatabase('the domain re-check job (jobs.domain_recheck, LIFECYCLE Domain)', (db) => {
  let world: DnsWorld;
  let api: TestApi;
  let t: Tenant;
  before(async function () {
    world = await startDnsWorld();
    api = await startTestApi(
      db().store,
      {
        dns: { resolvers: [world.address], zone: 'dkim.appliance.test' },
        outbound: { hostname: 'mta.appliance.test' },
        jobs: { domain_recheck: '* * * * * *' },
      },
      { roles: { jobs: true } },
    );
    t = await api.tenant();
  });
  after(async function () {
    await api.stop();
    await world.stop();
  });

  const domain = async (id: string) =>
    (await t.api.get(`/v1/domains/${id}`)).body as {
      status: string;
      last_checked_at: string | null;
      failure_reason: string | null;
    };
  const becomes = (id: string, status: string) =>
    waitFor(
      async () => ((await domain(id)).status === status ? domain(id) : null),
      8000,
      `domain ${id} to become ${status}`,
    );

  it('checks a pending domain on its own and verifies it once its CNAMEs appear', async function () {
    const d = (await t.api.post('/v1/domains', { domain: `cron-${Date.now()}.send.test` })).body;
    const checked = await waitFor(
      async () => ((await domain(d.id)).last_checked_at ? domain(d.id) : null),
      8000,
      'the first re-check',
    );
    expect(checked.status).to.equal('pending');
    expect(checked.failure_reason).to.include(`ph1._domainkey.${d.domain}`);
    for (const r of (d.records as Rec[]).filter((x) => x.required)) world.add(r.name, r.type, r.value);
    expect((await becomes(d.id, 'verified')).failure_reason).to.equal(null);
  });

  it('moves a verified domain to temporary_failure when a CNAME goes, and back to verified when it returns', async function () {
    const d = (await t.api.post('/v1/domains', { domain: `cron-lost-${Date.now()}.send.test` })).body;
    const required = (d.records as Rec[]).filter((x) => x.required);
    for (const r of required) world.add(r.name, r.type, r.value);
    expect((await t.api.post(`/v1/domains/${d.id}/verify`)).body.status).to.equal('verified');

    world.remove(required[2].name, 'CNAME');
    expect((await becomes(d.id, 'temporary_failure')).failure_reason).to.include(required[2].name);

    world.add(required[2].name, 'CNAME', required[2].value);
    await becomes(d.id, 'verified');
  });
});
