import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, writeConfig } from '../helpers/process.js';
import { startDnsWorld, type DnsWorld } from '../helpers/dns-world.js';

// issue 22: `posthorn verify ADDRESS… [--file FILE] [--project ID] [--json]`, against a DNS server on loopback
describe('posthorn verify (issue 22)', function () {
  this.timeout(60_000);
  let world: DnsWorld;
  let config: { dir: string; path: string };
  const cli = (args: string[]) => runCli([...args, '--config', config.path]);

  before(async function () {
    world = await startDnsWorld();
    world.add('ok.test', 'MX', { exchange: 'mx.ok.test', priority: 10 });
    world.add('mailinator.com', 'MX', { exchange: 'mx.mailinator.com', priority: 10 });
    config = writeConfig({ dns: { resolvers: [world.address] }, verify: { dns_timeout_ms: 500 } });
  });
  after(async function () {
    await world.stop();
  });

  it('checks the addresses given, in order, as the API does; --json prints an array', async function () {
    const r = await cli(['verify', 'jane@ok.test', 'temp@mailinator.com', 'a..b@ok.test', 'x@nxdomain.test', '--json']);
    expect(r.code, r.stderr).to.equal(0);
    const rows = r.json as Array<Record<string, unknown>>;
    expect(rows.map((v) => [v.email, v.result])).to.deep.equal([
      ['jane@ok.test', 'valid'],
      ['temp@mailinator.com', 'risky'],
      ['a..b@ok.test', 'invalid'],
      ['x@nxdomain.test', 'invalid'],
    ]);
    expect(rows[0]).to.deep.include({ object: 'email_verification', mail_servers: ['mx.ok.test'], reasons: [] });
    expect(rows[2].reasons).to.deep.equal(['invalid_syntax']);
    expect(rows[3].reasons).to.deep.equal(['no_mail_server']);
  });

  it('reads a list from --file (blank lines and # comments skipped) and prints a table with a summary', async function () {
    const file = join(config.dir, 'list.txt');
    const many = Array.from({ length: 150 }, (_, i) => `user${i}@ok.test`);
    writeFileSync(file, ['# exported', 'sales@ok.test ', '', ...many].join('\n'));
    const r = await cli(['verify', '--file', file]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/sales@ok\.test\s+risky\s+role_account/);
    expect(r.stdout).to.include('valid 150, invalid 0, risky 1, unknown 0');
    // a file's progress is drawn only on a terminal: stderr is a pipe here
    expect(r.stderr).to.not.include('[#');
  });

  it('with --project charges that project’s month, and refuses the whole list when the month cannot cover it', async function () {
    const projectId = ((await cli(['project', 'create', '--name', 'lists', '--json'])).json as { id: string }).id;
    expect((await cli(['project', 'set', projectId, '--verify-limit', '3'])).code).to.equal(0);
    // without --project nothing is charged: five addresses, and the three of the month are all left after
    expect(
      (await cli(['verify', 'v@ok.test', 'w@ok.test', 'x@ok.test', 'y@ok.test', 'z@ok.test', '--json'])).code,
    ).to.equal(0);
    const first = await cli(['verify', 'a@ok.test', 'b@ok.test', '--project', projectId, '--json']);
    expect(first.code, first.stderr).to.equal(0);
    const refused = await cli(['verify', 'c@ok.test', 'd@ok.test', '--project', projectId, '--json']);
    expect(refused.code).to.not.equal(0);
    expect(JSON.parse(refused.stderr).error.code).to.equal('quota_exhausted');
    expect((await cli(['verify', 'c@ok.test', '--project', projectId, '--json'])).code).to.equal(0);
    expect(
      JSON.parse((await cli(['verify', 'd@ok.test', '--project', projectId, '--json'])).stderr).error.code,
    ).to.equal('quota_exhausted');
  });

  it('names what is missing: no address, an unreadable file, an unknown project', async function () {
    const none = await cli(['verify', '--json']);
    expect(none.code).to.not.equal(0);
    expect(JSON.parse(none.stderr).error).to.deep.include({ code: 'validation_error' });
    const missing = await cli(['verify', '--file', join(config.dir, 'nope.txt')]);
    expect(missing.stderr).to.include('nope.txt');
    const unknown = await cli(['verify', 'a@ok.test', '--project', 'prj_nope', '--json']);
    expect(JSON.parse(unknown.stderr).error.code).to.equal('not_found');
  });
});
