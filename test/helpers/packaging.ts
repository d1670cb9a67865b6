import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import YAML from 'yaml';
import { PACKAGE_ROOT } from '../../src/config/package-root.js';
import { tempDir } from './temp-dir.js';

export const PACKAGING_DIR = join(PACKAGE_ROOT, 'packaging');
export const packagingFile = (name: string) => join(PACKAGING_DIR, name);

/**
 * The environment of a child command without the POSTHORN_ variables of the
 * developer's shell, nor the npm_ ones an `npm test` hands down (a parent
 * npm's prefix or config would steer the npm the test runs).
 */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('POSTHORN_') && !/^npm_/i.test(k)),
  );
  return { ...env, ...extra };
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `Section.Key` → its values in file order (systemd lets a key repeat). */
export function readUnit(path: string): Map<string, string[]> {
  const directives = new Map<string, string[]>();
  let section = '';
  for (const raw of readFileSync(path, 'utf8').split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = header[1]!;
      continue;
    }
    const eq = line.indexOf('=');
    const key = `${section}.${line.slice(0, eq).trim()}`;
    directives.set(key, [...(directives.get(key) ?? []), line.slice(eq + 1).trim()]);
  }
  return directives;
}

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
function dockerInstructions(path: string): string[] {
  const text = readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ');
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

/** The ENV of the Dockerfile's last stage: what the container runs with. */
export function dockerEnv(path: string): Record<string, string> {
  const instructions = dockerInstructions(path);
  const lastFrom = instructions.map((i) => /^FROM\s/i.test(i)).lastIndexOf(true);
  const env: Record<string, string> = {};
  for (const i of instructions.slice(lastFrom)) {
    const m = /^ENV\s+(.*)$/i.exec(i);
    if (!m) continue;
    for (const pair of m[1].trim().split(/\s+/)) {
      const eq = pair.indexOf('=');
      env[pair.slice(0, eq)] = pair.slice(eq + 1).replace(/^"(.*)"$/, '$1');
    }
  }
  return env;
}

/** The exec form of the Dockerfile's HEALTHCHECK: argv. */
export function dockerHealthcheck(path: string): string[] {
  const hc = dockerInstructions(path).find((i) => /^HEALTHCHECK\s/i.test(i));
  if (!hc) throw new Error(`${path} has no HEALTHCHECK`);
  return JSON.parse(hc.slice(hc.indexOf(' CMD ') + 5)) as string[];
}

/**
 * The environment compose gives a service, `${VAR:-default}` read the way
 * compose reads it, with `vars` as the shell's variables.
 */
export function composeEnv(path: string, service: string, vars: Record<string, string> = {}): Record<string, string> {
  const doc = YAML.parse(readFileSync(path, 'utf8')) as {
    services: Record<string, { environment?: Record<string, string | number | boolean> }>;
  };
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(doc.services[service]?.environment ?? {})) {
    env[k] = String(v).replace(
      /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
      (_, name: string, def?: string) => vars[name] || (def ?? ''),
    );
  }
  return env;
}

export const versionOf = (dir: string) =>
  (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;

let packed: Promise<{ tarball: string; files: string[] }> | null = null;

/**
 * `npm pack` of the checkout, once per test process (the packaging tests share it). It packs
 * the dist/ that `npm test` has just built (`npm run build` first when running a file alone,
 * as for every test that starts `posthorn serve`): --ignore-scripts, because a pack's
 * `prepare` would rebuild dist/ in place while tests running beside this one (mocha
 * --parallel) start `posthorn serve` from it.
 */
export function packRelease(): Promise<{ tarball: string; files: string[] }> {
  packed ??= (async () => {
    const out = tempDir('posthorn-pack-');
    const pack = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], {
      cwd: PACKAGE_ROOT,
    });
    if (pack.code !== 0) throw new Error(`npm pack failed: ${pack.stderr}`);
    const [result] = JSON.parse(pack.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    return { tarball: join(out, result.filename), files: result.files.map((f) => f.path) };
  })();
  return packed;
}

/**
 * better-sqlite3's install script compiles SQLite, a minute and more on two
 * cores, and would otherwise try GitHub for a prebuilt binary (installs here
 * run with --ignore-scripts). The checkout's own build of the same version is
 * the same file; another version is compiled, as on an operator's machine,
 * never downloaded.
 */
export async function provideSqliteAddon(packageDir: string): Promise<void> {
  const installed = join(packageDir, 'node_modules', 'better-sqlite3');
  const ours = join(PACKAGE_ROOT, 'node_modules', 'better-sqlite3');
  const addon = join('build', 'Release', 'better_sqlite3.node');
  if (versionOf(installed) === versionOf(ours)) {
    mkdirSync(dirname(join(installed, addon)), { recursive: true });
    copyFileSync(join(ours, addon), join(installed, addon));
    return;
  }
  const rebuilt = await run('npm', ['rebuild', 'better-sqlite3', '--foreground-scripts'], {
    cwd: packageDir,
    env: childEnv({ npm_config_build_from_source: 'true' }),
  });
  if (rebuilt.code !== 0) throw new Error(`better-sqlite3 could not be built: ${rebuilt.stdout}${rebuilt.stderr}`);
}
