import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, posix, relative } from 'node:path';
import YAML from 'yaml';
import { PACKAGE_ROOT } from '../../src/config/package-root.js';
import { tempDir } from '../helpers/temp-dir.js';
import { waitFor } from '../helpers/wait.js';
import {
  childEnv,
  dockerEnv,
  packagingFile,
  packRelease,
  provideSqliteAddon,
  run,
  versionOf,
} from '../helpers/packaging.js';

// The two ways the appliance leaves the checkout, each laid out as it ships
// and started, and asked for everything it reads from its package's root
// (src/config/package-root.ts): the Docker image's last stage
// (packaging/Dockerfile) and the npm package (package.json "files").
// No Docker engine is needed: the image's tree is built here from the
// Dockerfile's own COPY lines.

const DOCKERFILE = packagingFile('Dockerfile');

/** Every file under `dir` of the checkout, as paths relative to the checkout. */
const filesUnder = (dir: string): string[] =>
  readdirSync(join(PACKAGE_ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(PACKAGE_ROOT, join(e.parentPath, e.name)));

/** Read from the package's root at run time: every one must be in the image and in the npm package. */
const RUNTIME_FILES = [
  'package.json',
  'bin/run.js',
  'dist/src/main.js',
  'dist/migrations/index.js',
  ...filesUnder('config'),
  ...filesUnder('assets'),
];

interface Stage {
  name: string | null;
  /** instructions after FROM, continuation lines joined, comments dropped */
  instructions: string[];
}

/** The Dockerfile's stages. */
function dockerStages(path: string): Stage[] {
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const stages: Stage[] = [];
  for (const line of lines) {
    const from = /^FROM\s+\S+(?:\s+AS\s+(\S+))?$/i.exec(line);
    if (from) stages.push({ name: from[1] ?? null, instructions: [] });
    else stages.at(-1)?.instructions.push(line);
  }
  return stages;
}

interface Copy {
  from: string | null;
  sources: string[];
  dest: string;
  /** the stage's WORKDIR at this line */
  workdir: string;
}

/** A stage's COPY lines (shell form; ADD is not used), each with the WORKDIR it runs in. */
function copiesOf(stage: Stage): Copy[] {
  const copies: Copy[] = [];
  let workdir = '/';
  for (const i of stage.instructions) {
    const wd = /^WORKDIR\s+(\S+)$/i.exec(i);
    if (wd) workdir = posix.resolve(workdir, wd[1]);
    expect(i, 'the Dockerfile uses COPY, not ADD').to.not.match(/^ADD\s/i);
    if (!/^COPY\s/i.test(i)) continue;
    const words = i.split(/\s+/).slice(1);
    expect(words[0], `${i}: the shell form`).to.not.match(/^\[/);
    const flags = words.filter((w) => w.startsWith('--'));
    const paths = words.filter((w) => !w.startsWith('--'));
    const from = flags.map((f) => /^--from=(.+)$/.exec(f)?.[1]).find(Boolean) ?? null;
    copies.push({ from, sources: paths.slice(0, -1), dest: paths.at(-1)!, workdir });
  }
  return copies;
}

/** The stage's last WORKDIR: where its CMD runs, and where a later stage's COPY --from finds what it built. */
const workdirOf = (stage: Stage) =>
  stage.instructions.reduce((dir, i) => {
    const wd = /^WORKDIR\s+(\S+)$/i.exec(i);
    return wd ? posix.resolve(dir, wd[1]) : dir;
  }, '/');

/** The top-level names .dockerignore keeps out of the build context. */
function dockerIgnored(): (path: string) => boolean {
  const patterns = readFileSync(join(PACKAGE_ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim().replace(/\/$/, ''))
    .filter((l) => l && !l.startsWith('#'));
  const regexps = patterns.map(
    (p) => new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}(/|$)`),
  );
  return (path) => regexps.some((r) => r.test(path.replace(/^\.\//, '')));
}

/**
 * The image's /opt/posthorn laid out in `root` from the last stage's COPY
 * lines: a path of the build context is the checkout's; a path of the build
 * stage is the checkout's too (that stage copies the checkout into its
 * WORKDIR and builds there, as `npm run build` did here). node_modules is a
 * symlink to the checkout's: the image's is the same lockfile's with the
 * dev dependencies pruned, a subset of it (that the production dependencies
 * alone run the appliance is the npm package's test below).
 */
function layOutImage(root: string): { workdir: string; cmd: string[] } {
  const stages = dockerStages(DOCKERFILE);
  const last = stages.at(-1)!;
  const workdir = workdirOf(last);
  const ignored = dockerIgnored();
  for (const stage of stages) {
    for (const copy of copiesOf(stage).filter((c) => c.from === null)) {
      for (const source of copy.sources) {
        expect(
          ignored(source),
          `${source} (COPY in the stage ${stage.name ?? 'last'}) is kept out of the build context by .dockerignore`,
        ).to.equal(false);
        expect(
          existsSync(join(PACKAGE_ROOT, source)),
          `${source} (COPY in the stage ${stage.name ?? 'last'}) is in the checkout`,
        ).to.equal(true);
      }
    }
  }
  for (const copy of copiesOf(last)) {
    const destination = join(root, relative(workdir, posix.resolve(copy.workdir, copy.dest)));
    const intoFolder = copy.dest.endsWith('/') || copy.dest === '.' || copy.sources.length > 1;
    for (const source of copy.sources) {
      let inCheckout = source;
      if (copy.from !== null) {
        const stage = stages.find((s) => s.name === copy.from);
        expect(stage, `the stage ${copy.from}`).to.not.equal(undefined);
        const stageDir = workdirOf(stage!);
        expect(source.startsWith(`${stageDir}/`), `${source} is under the build stage's WORKDIR ${stageDir}`).to.equal(
          true,
        );
        inCheckout = source.slice(stageDir.length + 1);
      }
      const from = join(PACKAGE_ROOT, inCheckout);
      expect(existsSync(from), `${inCheckout} (COPY ${copy.from ? `--from=${copy.from} ` : ''}${source})`).to.equal(
        true,
      );
      const to = intoFolder ? join(destination, basename(source)) : destination;
      mkdirSync(dirname(to), { recursive: true });
      if (inCheckout === 'node_modules') symlinkSync(from, to, 'dir');
      else if (statSync(from).isDirectory()) cpSync(from, to, { recursive: true });
      else copyFileSync(from, to);
    }
  }
  const cmd = last.instructions.find((i) => /^CMD\s/i.test(i));
  expect(cmd, 'the last stage has a CMD').to.not.equal(undefined);
  return { workdir, cmd: JSON.parse(cmd!.slice(4)) as string[] };
}

/** Every file under `dir`, not following symlinks (the tree's node_modules). */
const treeOf = (dir: string) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isSymbolicLink() && !relative(dir, e.parentPath).startsWith('node_modules'))
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();

interface Serving {
  baseUrl: string;
  output(): string;
  /** SIGTERM; resolves with the exit code */
  stop(): Promise<number | null>;
}

/** `program args` in `cwd`, resolved once its log says which port the API got. */
async function startServing(program: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Serving> {
  const child = spawn(program, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const died = exited.then((code) => Promise.reject(new Error(`serve exited with ${code}:\n${output}`)));
  const listening = waitFor(
    async () => /"port":(\d+),"msg":"API listening"/.exec(output)?.[1],
    30_000,
    'the API listening',
  );
  try {
    const port = await Promise.race([listening, died]);
    return {
      baseUrl: `http://127.0.0.1:${port}`,
      output: () => output,
      async stop() {
        if (child.exitCode === null) child.kill('SIGTERM');
        return exited;
      },
    };
  } catch (e) {
    if (child.exitCode === null) child.kill('SIGKILL');
    throw e;
  }
}

/** What a browser asks for when it opens the dashboard: the sign-in page and the files it names, as the checkout has them. */
async function expectDashboard(baseUrl: string): Promise<void> {
  const page = await fetch(`${baseUrl}/dashboard/sign-in`);
  const html = await page.text();
  expect(page.status, html).to.equal(200);
  expect(page.headers.get('content-type')).to.match(/^text\/html/);
  const named = [...html.matchAll(/(?:href|src)="(\/dashboard\/assets\/[^"?#]+)/g)].map((m) => m[1]).sort();
  expect(named).to.deep.equal(['/dashboard/assets/dashboard.css', '/dashboard/assets/dashboard.js']);
  const types: Record<string, RegExp> = { css: /^text\/css/, js: /^text\/javascript/ };
  for (const path of named) {
    const res = await fetch(`${baseUrl}${path}`);
    const body = await res.text();
    expect(res.status, `${path}: ${body}`).to.equal(200);
    expect(res.headers.get('content-type'), path).to.match(types[path.split('.').pop()!]);
    expect(body, path).to.equal(readFileSync(join(PACKAGE_ROOT, 'assets', 'dashboard', basename(path)), 'utf8'));
  }
  const health = await fetch(`${baseUrl}/healthz`);
  expect(health.status).to.equal(200);
  await waitFor(async () => (await fetch(`${baseUrl}/readyz`)).status === 200, 10_000, '/readyz 200');
}

describe('the shipped appliance: the Docker image and the npm package', function () {
  this.timeout(60_000);

  let tarball: string;
  let packed: string[];

  before(async function () {
    this.timeout(180_000);
    // dist/ as npm test built it, in the tarball and in the checkout, where the image's tree takes it from
    ({ tarball, files: packed } = await packRelease());
  });

  describe("packaging/Dockerfile's last stage (its COPY lines laid out without Docker)", function () {
    let root: string;
    let cmd: string[];

    before(function () {
      root = tempDir('posthorn-image-');
      ({ cmd } = layOutImage(root));
    });

    it('holds every file the appliance reads from its package root', function () {
      for (const f of RUNTIME_FILES) expect(existsSync(join(root, f)), f).to.equal(true);
    });

    it("serves the dashboard's page, script and stylesheet when started as the image starts it, and writes nothing into its code", async function () {
      const before = treeOf(root);
      const data = tempDir('posthorn-image-data-');
      // the image's ENV, with its data, hosts and ports moved to a temp folder and loopback
      const env: Record<string, string> = { POSTHORN_BLOCKLISTS__LISTS: '[]' };
      for (const [k, v] of Object.entries(dockerEnv(DOCKERFILE))) {
        env[k] = k === 'POSTHORN_DATA_DIR' ? data : k.endsWith('__HOST') ? '127.0.0.1' : k.endsWith('__PORT') ? '0' : v;
      }
      expect(env.NODE_ENV).to.equal('production');
      expect(cmd[0]).to.equal('node');
      const app = await startServing(process.execPath, cmd.slice(1), root, childEnv(env));
      try {
        await expectDashboard(app.baseUrl);
      } finally {
        expect(await app.stop(), app.output()).to.equal(0);
      }
      expect(existsSync(join(data, 'posthorn.sqlite'))).to.equal(true);
      expect(treeOf(root)).to.deep.equal(before);
    });
  });

  describe('the npm package, installed with `npm install ./posthorn-*.tgz` in an empty folder', function () {
    let project: string;

    before(async function () {
      this.timeout(300_000);
      project = tempDir('posthorn-npm-');
      // a package.json of its own, so that npm installs here and not into a folder above
      writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'posthorn-operator', private: true }));
      // Only the package's own dependencies (a dependency's devDependencies are never installed),
      // resolved without the lockfile as on an operator's machine, from npm's cache and else the
      // npm registry: 12 to 14 s on two cores, warm cache or cold. --ignore-scripts: better-sqlite3's
      // install script would ask GitHub for a binary; the addon is provided below instead.
      const install = await run(
        'npm',
        ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'],
        { cwd: project },
      );
      expect(install.code, install.stderr).to.equal(0);
      await provideSqliteAddon(project);
    });

    it('ships what the appliance reads at run time, and neither its sources nor its tests', function () {
      for (const f of RUNTIME_FILES) expect(packed, f).to.include(f);
      expect(
        packed.filter(
          (f) =>
            /^(src|test|migrations|scripts|bench|docs|node_modules|\.ci)\//.test(f) ||
            (f.endsWith('.ts') && !f.endsWith('.d.ts')),
        ),
      ).to.deep.equal([]);
    });

    it('answers `npx posthorn --version` from the installed bin', async function () {
      const version = await run('npx', ['posthorn', '--version'], { cwd: project });
      expect(version.code, version.stderr).to.equal(0);
      expect(version.stdout).to.include(`posthorn/${versionOf(PACKAGE_ROOT)}`);
    });

    it("serves the dashboard's page, script and stylesheet and /healthz with a config in that folder, its data there too", async function () {
      const config = join(project, 'posthorn.yaml');
      // one object each: YAML.stringify would write a shared one as an anchor and its aliases
      const loopback = () => ({ host: '127.0.0.1', port: 0 });
      writeFileSync(
        config,
        YAML.stringify({
          data_dir: './data',
          http: loopback(),
          smtp: { inbound: loopback(), submission: loopback() },
          blocklists: { lists: [] },
        }),
      );
      const app = await startServing(
        join(project, 'node_modules', '.bin', 'posthorn'),
        ['serve', '--config', config],
        project,
        childEnv(),
      );
      try {
        await expectDashboard(app.baseUrl);
      } finally {
        expect(await app.stop(), app.output()).to.equal(0);
      }
      expect(existsSync(join(project, 'data', 'posthorn.sqlite'))).to.equal(true);
      expect(existsSync(join(project, 'node_modules', 'posthorn', 'data'))).to.equal(false);
    });
  });
});
