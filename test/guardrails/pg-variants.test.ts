import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { PACKAGE_ROOT } from '../../src/config/package-root.js';
import { PG_LEFT_OUT } from '../helpers/databases.js';
import { tempDir } from '../helpers/temp-dir.js';

const execFileAsync = promisify(execFile);

describe('a test run without PostgreSQL', function () {
  /** mocha as `npm test` runs it (the repository's .mocharc), on two spec files that use the database helper */
  async function run(env: Record<string, string>): Promise<string> {
    const dir = tempDir('posthorn-run-');
    const helper = pathToFileURL(join(PACKAGE_ROOT, 'test', 'helpers', 'databases.ts')).href;
    const specs = ['a', 'b'].map((name) => {
      const file = join(dir, `${name}.test.mts`);
      writeFileSync(
        file,
        `import { DATABASE_KINDS } from '${helper}';\ndescribe('${name}', () => { it('knows its databases', () => { if (!DATABASE_KINDS.includes('sqlite')) throw new Error('no sqlite'); }); });\n`,
      );
      return file;
    });
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('POSTHORN_')));
    const { stdout } = await execFileAsync(
      process.execPath,
      [join(PACKAGE_ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js'), ...specs],
      { cwd: PACKAGE_ROOT, env: { ...clean, ...env } },
    );
    return stdout;
  }

  let without: string;
  let withUrl: string;
  before(async function () {
    // nothing connects to the URL: the spec files define no PostgreSQL suite
    [without, withUrl] = await Promise.all([
      run({}),
      run({ POSTHORN_TEST_PG_URL: 'postgres://nobody@127.0.0.1:1/unused' }),
    ]);
  });

  it('says once, after the tests ran, that the PostgreSQL variants were not run', function () {
    expect(without).to.match(/2 passing/);
    expect(without).to.include('PostgreSQL variants not run: set POSTHORN_TEST_PG_URL');
    expect(without.split(PG_LEFT_OUT), without).to.have.length(2);
    expect(without.indexOf(PG_LEFT_OUT), without).to.be.greaterThan(without.indexOf('..'));
  });

  it('says nothing of the kind when POSTHORN_TEST_PG_URL is set', function () {
    expect(withUrl).to.match(/2 passing/);
    expect(withUrl).to.not.include('PostgreSQL variants not run');
  });
});
