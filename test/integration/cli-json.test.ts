import { expect } from 'chai';
import { readFileSync, writeFileSync } from 'node:fs';
import { PACKAGE_ROOT } from '../../src/config/package-root.js';
import { join } from 'node:path';
import { startDnsWorld, type DnsWorld } from '../helpers/dns-world.js';
import { runCli, writeConfig, type CliResult } from '../helpers/process.js';
import { tempDir } from '../helpers/temp-dir.js';

/** The commands oclif knows: the manifest `npm run build` writes from dist/src/cli/commands/. */
const COMMAND_IDS = Object.keys(
  (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'oclif.manifest.json'), 'utf8')) as { commands: object }).commands,
);

/** CONTRACT §3's list, as oclif ids. */
const CONTRACT_COMMANDS = [
  'serve',
  'migrate',
  'project:create',
  'project:list',
  'project:set',
  'key:create',
  'key:list',
  'key:revoke',
  'suppression:list',
  'suppression:add',
  'suppression:remove',
  'domain:list',
  'domain:show',
  'domain:verify',
  'queue:stats',
  'queue:show',
  'queue:retry',
  'email:cancel',
  'doctor',
];

/** --json's promise: stdout is one JSON document, or empty with one JSON error document on stderr. */
function expectJsonOutput(r: CliResult, what: string): void {
  if (r.stdout === '') {
    expect(r.code, `${what}: empty stdout on success`).to.not.equal(0);
    const err = JSON.parse(r.stderr).error;
    expect(err, what).to.have.all.keys('code', 'message');
    return;
  }
  expect(r.json, `${what}: stdout is not one JSON document:\n${r.stdout}`).to.not.equal(undefined);
}

describe('the CLI with --json (CONTRACT §3, §5)', function () {
  // some forty CLI processes one after the other: about 35 s alone, over 120 s on a loaded two-core machine
  this.timeout(300_000);
  let world: DnsWorld;
  let config: string;
  before(async function () {
    world = await startDnsWorld();
    config = writeConfig({ dns: { resolvers: [world.address] } }).path;
  });
  after(async function () {
    await world.stop();
  });

  it('has every command of CONTRACT §3, and backup and restore', function () {
    expect(COMMAND_IDS).to.include.members([...CONTRACT_COMMANDS, 'backup', 'restore']);
  });

  it('every command but serve prints JSON with --json standing anywhere after the command, as does --config', async function () {
    const dir = tempDir('posthorn-json-');
    const eml = join(dir, 'dsn.eml');
    writeFileSync(
      eml,
      'From: MAILER-DAEMON@mx.isp.test\r\nTo: bounce+x@mta.shop.test\r\nSubject: Undelivered Mail Returned to Sender\r\n\r\n<gone@isp.test>: host mx.isp.test said: 550 5.1.1 User unknown\r\n',
    );
    const seen = new Set<string>();
    const run = async (id: string, args: string[]) => {
      seen.add(id);
      const r = await runCli(args);
      expectJsonOutput(r, args.join(' '));
      return r;
    };
    const C = ['--config', config];
    expect((await run('migrate', ['migrate', '--json', ...C])).code).to.equal(0);
    const project = (await run('project:create', ['project', 'create', '--json', '--name', 'json-everywhere', ...C]))
      .json.id as string;
    await run('project:list', ['project', 'list', ...C, '--json']);
    await run('project:set', ['project', 'set', project, '--json', '--approved', 'true', ...C]);
    const key = (await run('key:create', ['key', 'create', '--project', project, '--json', '--mode', 'test', ...C]))
      .json.id as string;
    await run('key:list', ['key', 'list', '--json', '--project', project, ...C]);
    await run('key:revoke', ['key', 'revoke', key, ...C, '--json']);
    await run('suppression:add', ['suppression', 'add', '--json', '--project', project, 'x@example.test', ...C]);
    await run('suppression:list', ['suppression', 'list', '--project', project, ...C, '--json']);
    await run('suppression:remove', ['suppression', 'remove', '--project', project, '--json', 'x@example.test', ...C]);
    expect((await run('suppressions:review', ['suppressions', 'review', '--json', ...C])).json).to.deep.equal([]);
    await run('domain:list', ['domain', 'list', '--json', '--project', project, ...C]);
    await run('domain:show', ['domain', 'show', 'dom_nope', '--json', ...C]);
    await run('domain:verify', ['domain', 'verify', '--json', 'dom_nope', ...C]);
    await run('domain:rotate-dkim', ['domain', 'rotate-dkim', 'nope.example', ...C, '--json']);
    await run('dmarc:import', ['dmarc', 'import', join(dir, 'missing.xml'), '--json', ...C]);
    const csv = join(dir, 'contacts.csv');
    writeFileSync(csv, 'email\r\nx@json.example\r\n');
    expect(
      (await run('contacts:import', ['contacts', 'import', csv, '--project', project, '--json', ...C])).json.created,
    ).to.equal(1);
    expect(
      (await run('contacts:export', ['contacts', 'export', '--json', '--project', project, ...C])).json.rows,
    ).to.equal(1);
    await run('queue:stats', ['queue', 'stats', ...C, '--json']);
    await run('queue:show', ['queue', 'show', 'msg_nope', '--json', ...C]);
    await run('queue:retry', ['queue', 'retry', 'msg_nope', ...C, '--json']);
    const cancel = await run('email:cancel', ['email', 'cancel', 'msg_nope', '--json', ...C]);
    expect(JSON.parse(cancel.stderr).error.code).to.equal('not_found');
    await run('template:list', ['template', 'list', '--project', project, '--json', ...C]);
    await run('template:show', ['template', 'show', 'nope', '--project', project, '--json', ...C]);
    await run('template:render', ['template', 'render', 'nope', '--json', '--project', project, ...C]);
    await run('inbound:parse', ['inbound', 'parse', eml, '--json', ...C]);
    await run('verify', ['verify', '--json', 'not-an-address', ...C]);
    await run('doctor', ['doctor', ...C, '--json']);
    expect((await run('cluster:status', ['cluster', 'status', '--json', ...C])).json.nodes).to.deep.equal([]);
    expect((await run('mta:status', ['mta', 'status', ...C, '--json'])).json).to.deep.equal({ providers: [], ips: [] });
    await run('cluster:release', ['cluster', 'release', 'node_nope', ...C, '--json']);
    const file = join(dir, 'copy.sqlite');
    expect((await run('backup', ['backup', '--json', file, ...C])).code).to.equal(0);
    expect((await run('restore', ['restore', file, '--json', ...C])).code).to.equal(0);
    // a usage error is JSON too
    await run('key:create', ['key', 'create', '--json', ...C]);
    // no key (neither --key nor POSTHORN_KEY): the refusal is one JSON document too
    await run('listen', ['listen', '--json', ...C]);
    expect([...seen].sort()).to.deep.equal(COMMAND_IDS.filter((id) => id !== 'serve').sort());
  });

  it('an unknown command with --json prints {"error": {"code": "not_found", …}} on stderr and exits non-zero', async function () {
    for (const args of [
      ['frobnicate', '--json'],
      ['project', 'frobnicate', '--config', config, '--json'],
      ['--json'],
    ]) {
      const r = await runCli(args);
      expect(r.code, args.join(' ')).to.not.equal(0);
      expect(r.stdout).to.equal('');
      const err = JSON.parse(r.stderr).error;
      expect(err.code).to.equal('not_found');
      expect(err.message).to.be.a('string');
    }
    expect(JSON.parse((await runCli(['frobnicate', '--json'])).stderr).error.message).to.include(
      'command frobnicate not found',
    );
  });

  it("an unknown command without --json gets oclif's text", async function () {
    const r = await runCli(['frobnicate']);
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.include('command frobnicate not found');
    expect(() => JSON.parse(r.stderr)).to.throw();
  });
});
