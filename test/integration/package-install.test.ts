import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import YAML from 'yaml';
import { MIGRATIONS } from '../../migrations/index.js';
import { tempDir } from '../helpers/temp-dir.js';
import { waitFor } from '../helpers/wait.js';
import {
  childEnv,
  dockerHealthcheck,
  packagingFile,
  packRelease,
  provideSqliteAddon,
  readUnit,
  run,
} from '../helpers/packaging.js';

/** Where packaging/posthorn.service expects `npm install --global --prefix` to have put the release. */
const UNIT_PREFIX = '/opt/posthorn';

describe('the packaged release (npm pack, installed as packaging/posthorn.service says)', function () {
  this.timeout(60_000);

  let files: string[];
  let prefix: string;
  let packageDir: string;

  before(async function () {
    this.timeout(300_000);
    const release = await packRelease();
    files = release.files;
    const out = dirname(release.tarball);

    prefix = tempDir('posthorn-opt-');
    // No lockfile travels in the tarball: npm resolves the dependencies as on an operator's
    // machine, from the cache `npm ci` filled and else the npm registry (--prefer-offline).
    const install = await run(
      'npm',
      [
        'install',
        '--global',
        '--prefix',
        prefix,
        release.tarball,
        '--prefer-offline',
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
      ],
      { cwd: out },
    );
    expect(install.code, install.stderr).to.equal(0);
    packageDir = join(prefix, 'lib', 'node_modules', 'posthorn');
    await provideSqliteAddon(packageDir);
  });

  it('ships the built appliance and its packaging, not the sources or the tests', function () {
    for (const f of [
      'bin/run.js',
      'dist/src/main.js',
      'dist/migrations/index.js',
      'config/default.yaml',
      'package.json',
      'packaging/posthorn.service',
      'packaging/posthorn.sysusers',
      'packaging/posthorn.production.yaml',
    ]) {
      expect(files, f).to.include(f);
    }
    expect(
      files.filter(
        (f) => /^(src|test|migrations|node_modules|\.ci)\//.test(f) || (f.endsWith('.ts') && !f.endsWith('.d.ts')),
      ),
    ).to.deep.equal([]);
  });

  it("migrates, then serves from the unit's ExecStart until /readyz answers 200, and exits 0 on SIGTERM", async function () {
    const dir = tempDir('posthorn-release-');
    const configPath = join(dir, 'posthorn.yaml');
    const loopback = () => ({ host: '127.0.0.1', port: 0 });
    writeFileSync(
      configPath,
      YAML.stringify({ data_dir: './data', http: loopback(), smtp: { inbound: loopback(), submission: loopback() } }),
    );

    // `posthorn` as the operator types it: the bin link npm made in the prefix.
    const migrate = await run(join(prefix, 'bin', 'posthorn'), ['migrate', '--config', configPath, '--json'], {
      cwd: dir,
    });
    expect(migrate.code, migrate.stderr).to.equal(0);
    expect(JSON.parse(migrate.stdout)).to.deep.equal({ applied: MIGRATIONS.map(([name]) => name), pending: [] });

    const unit = readUnit(packagingFile('posthorn.service'));
    const [program, script, ...args] = unit.get('Service.ExecStart')![0].split(/\s+/);
    expect(program).to.equal('/usr/bin/node');
    expect(script.startsWith(`${UNIT_PREFIX}/`), script).to.equal(true);
    const unitEnv = Object.fromEntries(
      unit.get('Service.Environment')!.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]),
    );
    expect(unitEnv.POSTHORN_CONFIG).to.be.a('string');

    const child = spawn(process.execPath, [prefix + script.slice(UNIT_PREFIX.length), ...args], {
      cwd: dir,
      env: childEnv({ ...unitEnv, POSTHORN_CONFIG: configPath }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = once(child, 'exit').then(([code]) => code as number | null);
    const healthcheck = dockerHealthcheck(packagingFile('Dockerfile'));
    try {
      const listening = waitFor(
        async () => /"port":(\d+),"msg":"API listening"/.exec(output)?.[1],
        30_000,
        'the API of the installed serve',
      );
      const died = exited.then((code) => Promise.reject(new Error(`serve exited with ${code}:\n${output}`)));
      const port = await Promise.race([listening, died]);
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200, 10_000, '/readyz 200');
      // CONTRACT §1: the first start prints the default project's test key, which the unit's comment tells the operator to look for.
      expect(output).to.match(/ph_test_[A-Za-z0-9]{40}/);

      const probe = await run(healthcheck[0], healthcheck.slice(1), { env: childEnv({ POSTHORN_HTTP__PORT: port }) });
      expect(probe.code, `the Docker HEALTHCHECK: ${probe.stderr}`).to.equal(0);

      child.kill('SIGTERM');
      expect(await exited, output).to.equal(0);
      expect(output).to.include('"msg":"stopped"');

      const after = await run(healthcheck[0], healthcheck.slice(1), { env: childEnv({ POSTHORN_HTTP__PORT: port }) });
      expect(after.code, 'the HEALTHCHECK once nothing answers').to.equal(1);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    expect(existsSync(join(dir, 'data', 'posthorn.sqlite'))).to.equal(true);
    // nothing written into the installed package (the unit's ProtectSystem=strict would refuse it)
    expect(existsSync(join(packageDir, 'data'))).to.equal(false);
  });
});
