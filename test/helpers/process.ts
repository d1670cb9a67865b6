import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import YAML from 'yaml';
import { PACKAGE_ROOT } from '../../src/config/package-root.js';
import { tempDir } from './temp-dir.js';

const BIN = join(PACKAGE_ROOT, 'bin', 'run.js');

/** Environment without any POSTHORN_ variable of the developer's shell. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('POSTHORN_')));
  return { ...env, ...extra };
}

/** A config file in a new temp folder; the API on port 0 (the log says which port it got). */
export function writeConfig(overrides: Record<string, unknown> = {}): { dir: string; path: string } {
  const dir = tempDir('posthorn-proc-');
  // the SMTP listeners on loopback, on ports the system picks: two processes never fight over 2525
  const smtp = { inbound: { host: '127.0.0.1', port: 0 }, submission: { host: '127.0.0.1', port: 0 } };
  const config = { data_dir: './data', http: { host: '127.0.0.1', port: 0 }, smtp, ...overrides };
  const path = join(dir, 'posthorn.yaml');
  writeFileSync(path, YAML.stringify(config));
  return { dir, path };
}

export interface ServeProcess {
  child: ChildProcess;
  /** stdout and stderr as they came */
  output(): string;
  stdout(): string;
  baseUrl: string;
  /** resolves with the exit code */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** `posthorn serve --config FILE`, resolved once the API answers /healthz. */
export async function startServe(
  configPath: string,
  env: Record<string, string> = {},
  // a loaded CI machine (three test files at once on two cores) has taken over 15 s to start one
  timeoutMs = 30_000,
  extraArgs: string[] = [],
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [BIN, 'serve', '--config', configPath, ...extraArgs], {
    env: cleanEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let stdout = '';
  child.stdout.on('data', (d) => {
    out += d;
    stdout += d;
  });
  child.stderr.on('data', (d) => (out += d));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const deadline = Date.now() + timeoutMs;
  let port: string | undefined;
  while (!port) {
    if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}:\n${out}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`serve did not start:\n${out}`);
    }
    port = /"msg":"API listening"/.test(out) ? /"port":(\d+),"msg":"API listening"/.exec(out)?.[1] : undefined;
    await new Promise((r) => setTimeout(r, 50));
  }
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    child,
    output: () => out,
    stdout: () => stdout,
    baseUrl,
    exited,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** `serve` started and watched until its output first matches `pattern` (a moment of its start), not until it is up. */
export async function serveUntil(
  configPath: string,
  pattern: RegExp,
  timeoutMs = 30_000,
): Promise<{ child: ChildProcess; output: () => string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--config', configPath], {
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve never printed ${pattern}:\n${out}`)), timeoutMs);
    const seen = (d: Buffer) => {
      out += d.toString();
      if (pattern.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', seen);
  });
  return { child, output: () => out, exited };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  json: any;
}

export async function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [BIN, ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const [code] = await once(child, 'exit');
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code: code as number | null, stdout, stderr, json };
}
