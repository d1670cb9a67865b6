import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { runCli, startServe, writeConfig, type ServeProcess } from '../helpers/process.js';
import { client } from '../helpers/http.js';
import { expectError } from '../helpers/assert.js';
import { SCOPES } from '../../src/modules/account/keys/scopes.js';
import { MIGRATIONS } from '../../migrations/index.js';
import { startDnsWorld, type DnsWorld } from '../helpers/dns-world.js';
import { waitFor } from '../helpers/wait.js';

describe('posthorn CLI (CONTRACT §3)', function () {
  this.timeout(60_000);
  let config: string;
  let cli: (args: string[]) => ReturnType<typeof runCli>;

  before(function () {
    config = writeConfig().path;
    cli = (args) => runCli([...args, '--config', config]);
  });

  it('migrate applies every migration on an empty data dir and then has none pending', async function () {
    const r = await cli(['migrate', '--json']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.json).to.deep.equal({ applied: MIGRATIONS.map(([n]) => n), pending: [] });
    expect((await cli(['migrate', '--json'])).json).to.deep.equal({ applied: [], pending: [] });
  });

  describe('project', function () {
    it('create prints {id, name, approved, suspended, limits}', async function () {
      const r = await cli(['project', 'create', '--name', 'shop', '--json']);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.json).to.include({ name: 'shop', approved: false, suspended: false });
      expect(r.json.id).to.match(/^prj_/);
      expect(r.json.limits).to.deep.equal({ daily: 0, monthly: 0, domains: 0, verifications: 0 });
      const approved = await cli(['project', 'create', '--json', '--name', 'approved-shop', '--approved']);
      expect(approved.json.approved).to.equal(true);
    });

    it('set changes approval, suspension and limits', async function () {
      const p = (await cli(['project', 'create', '--name', 'to-set', '--json'])).json;
      const r = await cli([
        'project',
        'set',
        p.id,
        '--approved',
        'true',
        '--suspended',
        'true',
        '--daily-limit',
        '100',
        '--monthly-limit',
        '2000',
        '--domain-limit',
        '3',
        '--verify-limit',
        '50',
        '--json',
      ]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.json).to.deep.include({
        id: p.id,
        approved: true,
        suspended: true,
        limits: { daily: 100, monthly: 2000, domains: 3, verifications: 50 },
      });
      const back = await cli(['project', 'set', p.id, '--suspended', 'false', '--daily-limit', '0', '--json']);
      expect(back.json).to.deep.include({
        suspended: false,
        approved: true,
        limits: { daily: 0, monthly: 2000, domains: 3, verifications: 50 },
      });
    });

    it('list prints an array with --json and a table without', async function () {
      const r = await cli(['project', 'list', '--json']);
      expect(r.json).to.be.an('array');
      expect(r.json.map((p: { name: string }) => p.name)).to.include.members(['shop', 'to-set']);
      const table = await cli(['project', 'list']);
      expect(table.stdout.split('\n')[0]).to.match(/^ID\s+NAME\s+APPROVED/);
      expect(table.stdout).to.include('shop');
    });

    it('refuses a bad flag value on stderr with a non-zero exit', async function () {
      const p = (await cli(['project', 'create', '--name', 'bad-flag', '--json'])).json;
      const r = await cli(['project', 'set', p.id, '--approved', 'maybe', '--json']);
      expect(r.code).to.not.equal(0);
      expect(r.stdout).to.equal('');
      expect(JSON.parse(r.stderr).error.message).to.include('approved');
    });

    it('reports an unknown project as {"error": {code, message}} on stderr', async function () {
      const r = await cli(['project', 'set', 'prj_nope', '--approved', 'true', '--json']);
      expect(r.code).to.not.equal(0);
      expect(r.stdout).to.equal('');
      expect(JSON.parse(r.stderr)).to.deep.equal({
        error: { code: 'not_found', message: 'project prj_nope not found' },
      });
    });

    it('refuses a second project of the same name', async function () {
      const r = await cli(['project', 'create', '--name', 'shop', '--json']);
      expect(r.code).to.not.equal(0);
      expect(JSON.parse(r.stderr).error.code).to.equal('conflict');
    });
  });

  describe('key', function () {
    let projectId: string;
    let server: ServeProcess;
    before(async function () {
      projectId = (await cli(['project', 'create', '--name', 'keys', '--approved', '--json'])).json.id;
      server = await startServe(config);
    });
    after(async function () {
      await server.stop();
    });

    it('create prints {id, key, mode, scopes, project_id}; without --scopes the key holds every scope', async function () {
      const r = await cli(['key', 'create', '--project', projectId, '--mode', 'live', '--json']);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.json.id).to.match(/^key_/);
      expect(r.json.key).to.match(/^ph_live_[A-Za-z0-9]{40}$/);
      expect(r.json).to.include({ mode: 'live', project_id: projectId });
      expect(r.json.scopes).to.deep.equal([...SCOPES]);
    });

    it('create with --scopes limits the key to them', async function () {
      const r = await cli([
        'key',
        'create',
        '--project',
        projectId,
        '--mode',
        'test',
        '--scopes',
        'emails:read,emails:send',
        '--name',
        'ci',
        '--json',
      ]);
      expect(r.json.scopes).to.deep.equal(['emails:read', 'emails:send']);
      const api = client(server.baseUrl, r.json.key);
      expect((await api.get('/v1/emails')).status).to.equal(200);
      expectError(await api.get('/v1/api-keys'), 403, 'forbidden');
    });

    it('create refuses an unknown scope, naming it', async function () {
      const r = await cli([
        'key',
        'create',
        '--project',
        projectId,
        '--mode',
        'test',
        '--scopes',
        'emails:read,mail:all',
        '--json',
      ]);
      expect(r.code).to.not.equal(0);
      const err = JSON.parse(r.stderr).error;
      expect(err.code).to.equal('validation_error');
      expect(err.message).to.include('mail:all');
    });

    it('create --domain-id restricts the key to sending from that domain, and refuses one not in the project', async function () {
      const owner = client(
        server.baseUrl,
        (await cli(['key', 'create', '--project', projectId, '--mode', 'test', '--json'])).json.key,
      );
      const domain = (await owner.post('/v1/domains', { name: 'shop-keys.example' })).body;
      const r = await cli([
        'key',
        'create',
        '--project',
        projectId,
        '--mode',
        'test',
        '--scopes',
        'emails:send',
        '--domain-id',
        domain.id,
        '--json',
      ]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.json.domain_id).to.equal(domain.id);
      const restricted = client(server.baseUrl, r.json.key);
      const body = { to: ['delivered@simulator.posthorn.test'], subject: 's', text: 't' };
      expect((await restricted.post('/v1/emails', { ...body, from: 'a@shop-keys.example' })).status).to.equal(202);
      expectError(await restricted.post('/v1/emails', { ...body, from: 'a@elsewhere.example' }), 403, 'forbidden');
      const bad = await cli([
        'key',
        'create',
        '--project',
        projectId,
        '--mode',
        'test',
        '--domain-id',
        'dom_nope',
        '--json',
      ]);
      expect(bad.code).to.not.equal(0);
      expect(JSON.parse(bad.stderr).error.message).to.match(/^domain_id: /);
    });

    it('list prints the keys without their secrets', async function () {
      const made = (await cli(['key', 'create', '--project', projectId, '--mode', 'test', '--json'])).json;
      const r = await cli(['key', 'list', '--project', projectId, '--json']);
      expect(r.json.map((k: { id: string }) => k.id)).to.include(made.id);
      expect(r.stdout).to.not.include(made.key);
    });

    it('revoke makes the running server answer 401 to the next request', async function () {
      const made = (await cli(['key', 'create', '--project', projectId, '--mode', 'test', '--json'])).json;
      const api = client(server.baseUrl, made.key);
      expect((await api.get('/v1/emails')).status).to.equal(200);
      const r = await cli(['key', 'revoke', made.id, '--json']);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.json.revoked_at).to.be.a('string');
      expectError(await api.get('/v1/emails'), 401, 'unauthorized');
    });

    it('project set --suspended makes the running server answer 403 account_suspended', async function () {
      const p = (await cli(['project', 'create', '--name', 'to-suspend', '--json'])).json;
      const k = (await cli(['key', 'create', '--project', p.id, '--mode', 'test', '--json'])).json;
      await cli(['project', 'set', p.id, '--suspended', 'true']);
      expectError(await client(server.baseUrl, k.key).get('/v1/emails'), 403, 'account_suspended');
    });
  });
});

describe('posthorn domain (CONTRACT §3)', function () {
  this.timeout(60_000);
  let world: DnsWorld;
  let config: string;
  let server: ServeProcess;
  let key: string;
  before(async function () {
    world = await startDnsWorld();
    config = writeConfig({ dns: { resolvers: [world.address], zone: 'dkim.cli.test' } }).path;
    server = await startServe(config);
    key = server.output().match(/ph_test_[A-Za-z0-9]{40}/)![0];
  });
  after(async function () {
    await server.stop();
    await world.stop();
  });

  it('list, show and verify a domain created through the API', async function () {
    const api = client(server.baseUrl, key);
    const d = (await api.post('/v1/domains', { domain: 'cli-domain.example' })).body;
    const projectId = (await runCli(['project', 'list', '--json', '--config', config])).json.find(
      (p: { name: string }) => p.name === 'default',
    ).id;
    const list = await runCli(['domain', 'list', '--project', projectId, '--config', config, '--json']);
    expect(list.code, list.stderr).to.equal(0);
    expect(list.json.map((x: { id: string }) => x.id)).to.deep.equal([d.id]);
    const show = await runCli(['domain', 'show', d.id, '--config', config]);
    expect(show.stdout).to.include(`ph1._domainkey.cli-domain.example`);
    expect(show.stdout).to.match(/status\s+pending/);
    for (const r of d.records.filter((x: { required: boolean }) => x.required)) world.add(r.name, 'CNAME', r.value);
    const verify = await runCli(['domain', 'verify', d.id, '--json', '--config', config]);
    expect(verify.code, verify.stderr).to.equal(0);
    expect(verify.json.status).to.equal('verified');
    expect((await api.get(`/v1/domains/${d.id}`)).body.status).to.equal('verified');
  });

  it('rotate-dkim publishes a new key on a free selector by name or id, and refuses a second rotation while one is under way', async function () {
    const api = client(server.baseUrl, key);
    const d = (await api.post('/v1/domains', { domain: 'rotate-cli.example' })).body;
    expect(d.dkim).to.include({ active_selector: 'ph1' });
    // a key can change behind a selector only once its CNAME is found
    const early = await runCli(['domain', 'rotate-dkim', 'rotate-cli.example', '--json', '--config', config]);
    expect(JSON.parse(early.stderr).error.code).to.equal('conflict');
    for (const r of d.records.filter((x: { required: boolean }) => x.required)) world.add(r.name, 'CNAME', r.value);
    expect((await api.post(`/v1/domains/${d.id}/verify`)).body.status).to.equal('verified');
    expect(d.dkim.rotation).to.equal(null);
    const r = await runCli(['domain', 'rotate-dkim', 'Rotate-CLI.example.', '--json', '--config', config]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.json.dkim.active_selector).to.equal('ph1');
    expect(r.json.dkim.rotation.selector).to.equal('ph2');
    // the zone serves the new key at once, and the API shows the rotation under way
    const shown = (await api.get(`/v1/domains/${d.id}`)).body;
    expect(shown.dkim.rotation).to.deep.equal(r.json.dkim.rotation);
    expect(Date.parse(shown.dkim.rotation.signs_from) - Date.parse(shown.dkim.rotation.published_at)).to.equal(300_000);
    const again = await runCli(['domain', 'rotate-dkim', d.id, '--json', '--config', config]);
    expect(again.code).to.not.equal(0);
    const err = JSON.parse(again.stderr).error;
    expect(err.code).to.equal('conflict');
    expect(err.message).to.include('already under way');
    const text = await runCli(['domain', 'rotate-dkim', 'nope.example', '--config', config]);
    expect(text.code).to.not.equal(0);
    expect(text.stderr).to.include('nope.example');
  });

  it('dmarc import stores a real report (xs4all.nl, gzip) once for the registered domain it is about, and says why it refuses others', async function () {
    const api = client(server.baseUrl, key);
    expect((await api.post('/v1/domains', { domain: 'ueber.net' })).status).to.equal(201);
    const file = fileURLToPath(new URL('../fixtures/dmarc/xs4all-01.xml.gz', import.meta.url));
    const r = await runCli(['dmarc', 'import', file, '--json', '--config', config]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.json).to.include({
      object: 'dmarc_report',
      stored: true,
      domain: 'ueber.net',
      org_name: 'xs4all.nl',
      rows: 1,
      messages: 1,
    });
    expect(r.json.id).to.match(/^dmr_/);
    const again = await runCli(['dmarc', 'import', file, '--json', '--config', config]);
    expect(again.json).to.include({ stored: false, id: null });
    const hostile = fileURLToPath(new URL('../fixtures/dmarc/hostile/xxe.xml', import.meta.url));
    const refused = await runCli(['dmarc', 'import', hostile, '--json', '--config', config]);
    expect(refused.code).to.not.equal(0);
    expect(JSON.parse(refused.stderr).error).to.include({ code: 'validation_error' });
    expect(JSON.parse(refused.stderr).error.message).to.include('unsafe_xml').and.not.include('root:');
    const unknown = fileURLToPath(new URL('../fixtures/dmarc/fastmail-01.xml', import.meta.url));
    expect(
      JSON.parse((await runCli(['dmarc', 'import', unknown, '--json', '--config', config])).stderr).error.code,
    ).to.equal('not_found');
  });

  it('answers not_found for an unknown domain or project', async function () {
    const r = await runCli(['domain', 'show', 'dom_nope', '--json', '--config', config]);
    expect(r.code).to.not.equal(0);
    expect(JSON.parse(r.stderr).error.code).to.equal('not_found');
    const l = await runCli(['domain', 'list', '--project', 'prj_nope', '--json', '--config', config]);
    expect(JSON.parse(l.stderr).error.code).to.equal('not_found');
  });
});

describe('posthorn queue and suppression (CONTRACT §3)', function () {
  this.timeout(60_000);
  let config: string;
  let server: ServeProcess;
  let api: ReturnType<typeof client>;
  let projectId: string;
  before(async function () {
    config = writeConfig({ limits: { requests_per_second: 10_000 } }).path;
    server = await startServe(config);
    api = client(server.baseUrl, server.output().match(/ph_test_[A-Za-z0-9]{40}/)![0]);
    projectId = (await runCli(['project', 'list', '--json', '--config', config])).json[0].id;
  });
  after(async function () {
    await server.stop();
  });
  const cli = (args: string[]) => runCli([...args, '--config', config, '--json']);
  const SIM = 'simulator.posthorn.test';

  it('queue show and retry: an ambiguous email goes out again only when the operator says so', async function () {
    const id = (
      await api.post('/v1/emails', { from: 'a@example.test', to: [`ambiguous@${SIM}`], subject: 's', text: 't' })
    ).body.id;
    await waitFor(async () => (await api.get(`/v1/emails/${id}`)).body.status === 'ambiguous', 10_000, 'ambiguous');
    const show = await cli(['queue', 'show', id]);
    expect(show.code, show.stderr).to.equal(0);
    expect(show.json).to.include({ id, status: 'ambiguous', project_id: projectId });
    expect(show.json.queue[0]).to.include({ state: 'done', attempts: 1, data_started: false });
    expect(show.json.recipients[0]).to.include({ status: 'ambiguous' });
    const retry = await cli(['queue', 'retry', id]);
    expect(retry.code, retry.stderr).to.equal(0);
    expect(retry.json.status).to.equal('queued');
    // the running appliance sees the row due and walks it again
    await waitFor(async () => (await api.get(`/v1/emails/${id}`)).body.attempts === 2, 10_000, 'a second attempt');
    const notAmbiguous = (
      await api.post('/v1/emails', { from: 'a@example.test', to: [`delivered@${SIM}`], subject: 's', text: 't' })
    ).body.id;
    await waitFor(
      async () => (await api.get(`/v1/emails/${notAmbiguous}`)).body.status === 'accepted',
      10_000,
      'accepted',
    );
    // test mail whose walk ended as it was stored leaves no queue row; the ambiguous one kept its row above
    expect((await cli(['queue', 'show', notAmbiguous])).json.queue).to.deep.equal([]);
    const refused = await cli(['queue', 'retry', notAmbiguous]);
    expect(refused.code).to.not.equal(0);
    expect(JSON.parse(refused.stderr).error.code).to.equal('conflict');
  });

  it('email cancel: a scheduled email is cancelled by the operator, and a sent one is refused', async function () {
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const id = (
      await api.post('/v1/emails', {
        from: 'a@example.test',
        to: [`delivered@${SIM}`],
        subject: 's',
        text: 't',
        scheduled_at: at,
      })
    ).body.id;
    const r = await cli(['email', 'cancel', id]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.json).to.include({ id, status: 'cancelled' });
    expect((await api.get(`/v1/emails/${id}`)).body.status).to.equal('cancelled');
    const again = await cli(['email', 'cancel', id]);
    expect(again.code).to.not.equal(0);
    expect(JSON.parse(again.stderr).error.code).to.equal('not_schedulable');
  });

  it('queue stats counts rows and emails', async function () {
    const r = await cli(['queue', 'stats']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.json.deliveries.done).to.be.a('number');
    expect(r.json.emails.accepted).to.be.at.least(1);
  });

  it('suppression add, list and remove, and the API honours them', async function () {
    const add = await cli(['suppression', 'add', '--project', projectId, 'Blocked@Example.test']);
    expect(add.code, add.stderr).to.equal(0);
    expect(add.json).to.include({ email: 'blocked@example.test', reason: 'manual' });
    expect(
      (await cli(['suppression', 'list', '--project', projectId])).json.map((s: { email: string }) => s.email),
    ).to.include('blocked@example.test');
    const refused = await api.post('/v1/emails', {
      from: 'a@example.test',
      to: ['blocked@example.test'],
      subject: 's',
      text: 't',
    });
    expect(refused.status).to.equal(422);
    expect((await cli(['suppression', 'remove', '--project', projectId, 'blocked@example.test'])).code).to.equal(0);
    expect(
      (await api.post('/v1/emails', { from: 'a@example.test', to: ['blocked@example.test'], subject: 's', text: 't' }))
        .status,
    ).to.equal(202);
    expect((await cli(['suppression', 'remove', '--project', projectId, 'blocked@example.test'])).code).to.not.equal(0);
  });
});
