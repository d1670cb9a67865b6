import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { expect } from 'chai';
import YAML from 'yaml';
import { PACKAGE_ROOT } from '../../src/config/package-root.js';
import { startServe, type ServeProcess } from '../helpers/process.js';
import { missingFrom, readmeExamples, withRealIds, type ReadmeExample } from '../helpers/readme-blocks.js';
import { tempDir } from '../helpers/temp-dir.js';

// README.md's examples, run as printed against a started appliance, so the
// README cannot drift from the product: every ```sh block is run in order in
// one shell's state (variables carry over, as in a terminal), with
// POSTHORN_KEY exported as the README says, and must exit 0 and print what
// the ```json / ```text block after it shows. The only changes to the
// commands: the API's port, the local app's port for --forward-to, `npx
// posthorn` → this checkout's bin/run.js, curl told to fail on an HTTP error
// (--fail-with-body: a 400 would otherwise exit 0), and ids the README shows
// replaced by the ones the appliance really gave.

const BIN = join(PACKAGE_ROOT, 'bin', 'run.js');

async function freePort(): Promise<number> {
  const s = createNetServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as { port: number }).port;
  s.close();
  return port;
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('README.md, run as printed', function () {
  this.timeout(120_000);
  let serve: ServeProcess;
  let app: Server;
  let appPort: number;
  let port: number;
  let env: NodeJS.ProcessEnv;
  let state: string;
  const hooks: Array<{ headers: Record<string, unknown>; body: string }> = [];

  before(async function () {
    const dir = tempDir('posthorn-readme-');
    port = await freePort();
    // default.yaml's listeners, on ports of their own; the DNS zone off (it needs no port for these examples)
    const config = {
      data_dir: './data',
      http: { host: '127.0.0.1', port },
      smtp: { inbound: { host: '127.0.0.1', port: 0 }, submission: { host: '127.0.0.1', port: 0 } },
      dns: { server: { enabled: false } },
    };
    const configPath = join(dir, 'posthorn.yaml');
    writeFileSync(configPath, YAML.stringify(config));
    serve = await startServe(configPath);
    const key = /\n\s+(ph_test_\S+)\n/.exec(serve.stdout())?.[1];
    expect(key, 'the first start prints the test key, as the README says').to.match(/^ph_test_/);
    app = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        hooks.push({ headers: req.headers, body });
        res.end('ok');
      });
    }).listen(0, '127.0.0.1');
    await once(app, 'listening');
    appPort = (app.address() as { port: number }).port;
    state = join(dir, 'shell-state');
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('POSTHORN_')));
    env = { ...clean, POSTHORN_KEY: key!, POSTHORN_CONFIG: configPath };
  });

  after(async function () {
    app?.close();
    await serve?.stop();
  });

  /** The API and the local app where this test has them, in a command and in what it prints. */
  const atOurPorts = (text: string) =>
    text.replaceAll('localhost:8025', `127.0.0.1:${port}`).replaceAll('localhost:3000', `127.0.0.1:${appPort}`);

  /** The block as this test runs it: in the shell state the blocks before it left. */
  function commandOf(ex: ReadmeExample, ids: Map<string, string>): string {
    const script = atOurPorts(withRealIds(ex.script, ids))
      .replaceAll('npx posthorn', `node ${BIN}`)
      .replace(/\bcurl -s\b/g, 'curl -s --fail-with-body');
    return `set -a\n[ -f '${state}' ] && . '${state}'\nset -eo pipefail\n${ex.background ? '' : `trap "export -p > '${state}'" EXIT\n`}${script}\n`;
  }

  function start(ex: ReadmeExample, ids: Map<string, string>): { child: ChildProcess; out: Ran; done: Promise<Ran> } {
    const child = spawn('bash', ['-c', commandOf(ex, ids)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Ran = { code: null, stdout: '', stderr: '' };
    child.stdout.on('data', (d) => (out.stdout += d));
    child.stderr.on('data', (d) => (out.stderr += d));
    const done = once(child, 'exit').then(([code]) => ({ ...out, code: code as number | null }));
    return { child, out, done };
  }

  const readOnly = (script: string) => !/\s-d\s|-X\s*(POST|PATCH|DELETE)|create|send/.test(script);

  it('every shell block exits 0 and prints what the README shows next to it', async function () {
    const examples = readmeExamples(readFileSync(join(PACKAGE_ROOT, 'README.md'), 'utf8'));
    expect(examples.length, 'the README has runnable examples').to.be.greaterThan(4);
    const ids = new Map<string, string>();
    const running: Array<{ ex: ReadmeExample; child: ChildProcess; out: Ran; done: Promise<Ran> }> = [];
    for (const ex of examples) {
      const where = `README.md line ${ex.line}`;
      if (ex.background) {
        running.push({ ex, ...start(ex, ids) });
        // ready when it has printed its first lines
        const r = running[running.length - 1];
        for (let i = 0; i < 100 && !r.out.stdout.includes('\n'); i++) await new Promise((res) => setTimeout(res, 100));
        expect(r.out.stdout, `${where} started: ${r.out.stderr}`).to.include('\n');
        continue;
      }
      // A command that only reads may be run again for a few seconds: the README's reader runs it a moment later
      // than this test, when a delivery it shows has happened.
      const deadline = Date.now() + (readOnly(ex.script) ? 10_000 : 0);
      for (;;) {
        const ran = await start(ex, ids).done;
        const missing = ran.code === 0 && ex.shown ? missingFrom(atOurPorts(ex.shown), ran.stdout, ids) : [];
        if (ran.code === 0 && !missing.length) break;
        if (Date.now() < deadline) {
          await new Promise((res) => setTimeout(res, 250));
          continue;
        }
        expect(ran.code, `${where} exits 0; it printed:\n${ran.stdout}\n${ran.stderr}`).to.equal(0);
        expect(missing, `${where} prints what the README shows; it printed:\n${ran.stdout}`).to.deep.equal([]);
      }
    }
    for (const r of running) {
      const where = `README.md line ${r.ex.line}`;
      const deadline = Date.now() + 15_000;
      let missing = r.ex.shown ? missingFrom(atOurPorts(r.ex.shown), r.out.stdout, new Map(ids)) : [];
      while (missing.length && Date.now() < deadline) {
        await new Promise((res) => setTimeout(res, 200));
        missing = missingFrom(atOurPorts(r.ex.shown!), r.out.stdout, new Map(ids));
      }
      expect(
        missing,
        `${where} prints what the README shows; it printed:\n${r.out.stdout}\n${r.out.stderr}`,
      ).to.deep.equal([]);
      r.child.kill('SIGINT');
      const ran = await r.done;
      expect(ran.code, `${where} stops cleanly on Ctrl-C: ${ran.stderr}`).to.equal(0);
      // what it printed as forwarded reached the app, signed
      if (r.ex.script.includes('--forward-to'))
        expect(
          hooks.filter((h) => typeof h.headers['service-signature'] === 'string' && /"type":"email\./.test(h.body)),
        ).to.not.have.lengthOf(0);
    }
  });

  it('the check refuses output that differs from what the README shows', function () {
    const shown = '{"id":"msg_01m8dg35kc29pz2w386qawj2pq","object":"email", … "status":"accepted"}';
    const ids = new Map<string, string>();
    expect(
      missingFrom(shown, '{"id":"msg_01m8kgd19r6ztnstns0zkfbzgj","object":"email","status":"queued"}', ids),
    ).to.deep.equal(['"status":"accepted"']);
    expect(
      missingFrom(shown, '{"id":"msg_01m8kgd19r6ztnstns0zkfbzgj","object":"email","x":1,"status":"accepted"}', ids),
    ).to.deep.equal([]);
    expect(ids.get('msg_01m8dg35kc29pz2w386qawj2pq')).to.equal('msg_01m8kgd19r6ztnstns0zkfbzgj');
    expect(withRealIds('curl localhost:8025/v1/emails/msg_01m8dg35kc29pz2w386qawj2pq', ids)).to.equal(
      'curl localhost:8025/v1/emails/msg_01m8kgd19r6ztnstns0zkfbzgj',
    );
    expect(
      missingFrom(
        'key           ph_live_…\nmode          live',
        'id  key_x\nkey           ph_live_abc\nmode          test\n',
        new Map(),
      ),
    ).to.deep.equal(['mode          live']);
  });
});
