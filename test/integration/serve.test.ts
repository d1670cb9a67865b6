import { expect } from 'chai';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { serveUntil, startServe, writeConfig, runCli } from '../helpers/process.js';
import { client } from '../helpers/http.js';
import { expectError } from '../helpers/assert.js';

const KEY = /ph_test_[A-Za-z0-9]{40}/g;

describe('posthorn serve (CONTRACT §1)', function () {
  this.timeout(60_000);

  it('prints a test key on the first start only, and that key works across restarts', async function () {
    const { path } = writeConfig();
    const first = await startServe(path);
    let key: string;
    try {
      const keys = first.output().match(KEY) ?? [];
      expect(keys, first.output()).to.have.length(1);
      key = keys[0]!;
      const res = await client(first.baseUrl, key).get('/v1/emails');
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ next_cursor: null });
      expectError(await client(first.baseUrl).get('/v1/emails'), 401, 'unauthorized');
    } finally {
      expect(await first.stop()).to.equal(0);
    }
    expect(first.output()).to.include('"msg":"stopped"');
    // the key never reaches a log line: it is printed once, outside the JSON logs
    const logLines = first
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'));
    expect(logLines.join('\n')).to.not.include(key.slice(8));

    const second = await startServe(path);
    try {
      expect(second.output()).to.not.match(KEY);
      expect((await client(second.baseUrl, key).get('/v1/emails')).status).to.equal(200);
    } finally {
      await second.stop();
    }
  });

  it('finishes a request in flight when SIGTERM arrives, then exits 0', async function () {
    const { path } = writeConfig();
    const app = await startServe(path);
    const key = app.output().match(KEY)![0];
    const url = new URL('/v1/api-keys', app.baseUrl);
    const body = JSON.stringify({ name: 'in-flight' });
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        url,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode!, body: text }));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 5));
      // the rest of the body only after the server was told to stop
      setTimeout(() => {
        app.child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(5)), 400);
      }, 300);
    });
    const res = await answer;
    expect(res.status, res.body).to.equal(201);
    expect(JSON.parse(res.body).key).to.match(/^ph_test_/);
    expect(await app.exited).to.equal(0);
  });

  it('with --json prints the first start as one JSON document on stdout and logs on stderr', async function () {
    const { path } = writeConfig();
    const app = await startServe(path, {}, 15_000, ['--json']);
    try {
      const doc = JSON.parse(app.stdout());
      expect(doc.first_start.key).to.match(/^ph_test_[A-Za-z0-9]{40}$/);
      expect(doc.first_start.project_id).to.match(/^prj_/);
      expect((await client(app.baseUrl, doc.first_start.key).get('/v1/emails')).status).to.equal(200);
    } finally {
      await app.stop();
    }
    expect(app.stdout().trim().split('\n')).to.have.length(1);
  });

  it('stops cleanly on a SIGTERM that comes while it is still starting', async function () {
    const { path } = writeConfig();
    // its first log line: the start is under way, the API not listening yet
    const app = await serveUntil(path, /"msg":"/);
    expect(app.output()).to.not.include('API listening');
    app.child.kill('SIGTERM');
    expect(await app.exited, app.output()).to.equal(0);
    expect(app.output()).to.include('"msg":"stopped"');
  });

  it('stops on SIGINT too, closing cleanly', async function () {
    const { path } = writeConfig();
    const app = await startServe(path);
    expect(await app.stop('SIGINT')).to.equal(0);
    expect(app.output()).to.include('"msg":"stopped"');
  });

  it('refuses a second serve on the same SQLite data directory, and the first keeps serving', async function () {
    const { path } = writeConfig();
    const first = await startServe(path);
    try {
      const key = first.output().match(KEY)![0];
      const second = await runCli(['serve', '--config', path]);
      expect(second.code).to.not.equal(0);
      expect(second.stderr).to.include('another posthorn serve is running');
      expect((await client(first.baseUrl, key).get('/v1/emails')).status).to.equal(200);
    } finally {
      await first.stop();
    }
    // the lock goes with the process: a new start works
    const again = await startServe(path);
    expect(await again.stop()).to.equal(0);
  });

  it('stops with a message naming an unknown config key, before listening', async function () {
    const { path } = writeConfig({ http: { host: '127.0.0.1', port: 0, prot: 1 } });
    const r = await runCli(['serve', '--config', path]);
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.include('unknown config key "http.prot"');
    expect(r.stdout).to.not.match(KEY);
  });

  it('stops with a message naming a key of the wrong type set through the environment', async function () {
    const { path } = writeConfig();
    const r = await runCli(['serve', '--config', path], { POSTHORN_LIMITS__REQUESTS_PER_SECOND: 'lots' });
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.match(/limits\.requests_per_second.*POSTHORN_LIMITS__REQUESTS_PER_SECOND/);
  });

  it('takes the API port from POSTHORN_HTTP__PORT', async function () {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const { path } = writeConfig();
    const app = await startServe(path, { POSTHORN_HTTP__PORT: String(port) });
    try {
      expect(app.baseUrl).to.equal(`http://127.0.0.1:${port}`);
      expect((await client(app.baseUrl).get('/healthz')).body).to.deep.equal({ status: 'ok' });
    } finally {
      await app.stop();
    }
  });

  it('fails to start, saying why, when the API port is taken', async function () {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      const { path } = writeConfig({ http: { host: '127.0.0.1', port } });
      const r = await runCli(['serve', '--config', path]);
      expect(r.code).to.not.equal(0);
      expect(r.stderr).to.include('EADDRINUSE');
      // the first start's key is shown even so: it can never be shown again
      expect(r.stdout).to.match(KEY);
    } finally {
      blocker.close();
    }
  });

  it('fails to start, saying why, when the DNS zone port is taken over TCP', async function () {
    // UDP at the same port is free: only the TCP half fails to bind
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      const { path } = writeConfig({ dns: { server: { enabled: true, host: '127.0.0.1', port } } });
      const r = await runCli(['serve', '--config', path]);
      expect(r.code).to.not.equal(0);
      expect(r.stderr).to.include('EADDRINUSE');
    } finally {
      blocker.close();
    }
  });
});
