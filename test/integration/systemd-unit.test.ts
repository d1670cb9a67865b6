import { expect } from 'chai';
import { mkdirSync, readFileSync, writeFileSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/temp-dir.js';
import { packagingFile, readUnit, run } from '../helpers/packaging.js';

const UNIT = packagingFile('posthorn.service');

/**
 * The unit as an operator installs it, in a folder of its own. verify checks
 * that ExecStart's program exists: node may live elsewhere than /usr/bin on
 * the machine that runs the test.
 */
function unitCopy(edit: (text: string) => string = (t) => t): string {
  const dir = tempDir('posthorn-unit-');
  const path = join(dir, 'posthorn.service');
  writeFileSync(path, edit(readFileSync(UNIT, 'utf8').replaceAll('/usr/bin/node ', `${process.execPath} `)));
  return path;
}

describe('the systemd unit (packaging/posthorn.service)', function () {
  this.timeout(60_000);

  before(async function () {
    // .ci/run installs Debian's systemd for these checks; its tools work without systemd running.
    const found = await run('sh', ['-c', 'command -v systemd-analyze && command -v systemd-sysusers']);
    if (found.code !== 0)
      throw new Error('systemd-analyze and systemd-sysusers are needed (apt-get install systemd; .ci/run does it)');
  });

  it('passes systemd-analyze verify without a single warning', async function () {
    const ok = await run('systemd-analyze', ['verify', unitCopy()]);
    const said = ok.stdout + ok.stderr;
    expect(ok.code, said).to.equal(0);
    expect(said, said).to.equal('');

    // verify reports a bad directive only as a warning, exiting 0: silence is the pass mark,
    // and this shows the tool here does speak up.
    const broken = await run('systemd-analyze', [
      'verify',
      unitCopy((t) => t.replace('ProtectSystem=strict', 'ProtectSystem=strictest')),
    ]);
    expect(broken.stdout + broken.stderr).to.include('strictest');
  });

  it('runs as its own user with CAP_NET_BIND_SERVICE only, data readable by that user alone', function () {
    const unit = readUnit(UNIT);
    const one = (key: string) => {
      expect(unit.get(key), key).to.have.length(1);
      return unit.get(key)![0];
    };
    expect(one('Service.User')).to.equal('posthorn');
    expect(one('Service.Group')).to.equal('posthorn');
    expect(one('Service.AmbientCapabilities')).to.equal('CAP_NET_BIND_SERVICE');
    expect(one('Service.CapabilityBoundingSet')).to.equal('CAP_NET_BIND_SERVICE');
    expect(one('Service.StateDirectory')).to.equal('posthorn');
    expect(one('Service.StateDirectoryMode')).to.equal('0700');
    expect(one('Service.UMask')).to.equal('0077');
    expect(one('Service.ExecStart')).to.match(/ serve$/);
  });

  it('keeps the sandbox systemd-analyze security rates OK (exposure at most 2.0)', async function () {
    const path = unitCopy();
    const report = await run('systemd-analyze', ['security', '--offline=true', '--no-pager', path]);
    const score = /Overall exposure level for posthorn\.service: ([0-9.]+)/.exec(report.stdout);
    expect(score, report.stdout + report.stderr).to.not.equal(null);
    expect(Number(score![1]), report.stdout).to.be.at.most(2.0);

    const checks = JSON.parse(
      (await run('systemd-analyze', ['security', '--offline=true', '--json=short', path])).stdout,
    ) as Array<{ json_field: string; set: boolean }>;
    const passed = new Set(checks.filter((c) => c.set).map((c) => c.json_field));
    for (const field of [
      'UserOrDynamicUser',
      'NoNewPrivileges',
      'ProtectSystem',
      'ProtectHome',
      'PrivateTmp',
      'PrivateDevices',
      'UMask',
      'CapabilityBoundingSet_CAP_SYS_ADMIN',
      'CapabilityBoundingSet_CAP_DAC_FOWNER_IPC_OWNER',
      'SystemCallFilter_privileged',
    ]) {
      expect(passed.has(field), field).to.equal(true);
    }
  });

  it('names the user that packaging/posthorn.sysusers creates, with no login shell', async function () {
    const root = tempDir('posthorn-sysusers-');
    mkdirSync(join(root, 'etc'));
    mkdirSync(join(root, 'usr/lib/sysusers.d'), { recursive: true });
    copyFileSync(packagingFile('posthorn.sysusers'), join(root, 'usr/lib/sysusers.d/posthorn.conf'));
    const made = await run('systemd-sysusers', [`--root=${root}`]);
    expect(made.code, made.stderr).to.equal(0);

    const user = readUnit(UNIT).get('Service.User')![0];
    const entry = readFileSync(join(root, 'etc/passwd'), 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${user}:`));
    expect(entry, 'passwd entry').to.be.a('string');
    const [, , uid, gid, , home, shell] = entry!.split(':');
    expect(Number(uid)).to.be.above(0);
    expect(home).to.equal('/var/lib/posthorn');
    expect(shell).to.match(/nologin$/);
    const group = readFileSync(join(root, 'etc/group'), 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${readUnit(UNIT).get('Service.Group')![0]}:`));
    expect(group?.split(':')[2]).to.equal(gid);
  });
});
