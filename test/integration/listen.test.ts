import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Stripe from 'stripe';
import { buildConfig } from '../../src/config/load.js';
import { PACKAGE_ROOT } from '../../src/config/package-root.js';
import { buildCore, type CoreDeps } from '../../src/core.js';
import { systemClock } from '../../src/lib/time.js';
import { silentLogger } from '../../src/log/logger.js';
import { startRoles } from '../../src/start-roles.js';
import { DEFAULT_SUBSCRIPTION } from '../../src/modules/notifying/events/event-types.js';
import { createKey } from '../../src/modules/account/keys/keys.service.js';
import { createProject, setProject } from '../../src/modules/account/projects/projects.service.js';
import { ListenHub, type ListenLimits } from '../../src/modules/notifying/webhooks/listen-hub.js';
import { deleteEndpoint } from '../../src/modules/notifying/webhooks/webhooks.repo.js';
import type { Store } from '../../src/store/store.js';
import { client, type Client } from '../helpers/http.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { eachDatabase } from '../helpers/databases.js';
import { EventStreamReader, type ListenFrame } from '../../src/modules/notifying/webhooks/listen-stream.js';
import { expectError } from '../helpers/assert.js';
import { runCli, startServe, writeConfig, type ServeProcess } from '../helpers/process.js';
import { waitFor } from '../helpers/wait.js';

// `posthorn listen` end to end (docs/webhooks.md): a `posthorn serve`
// process, the CLI as a child process with POSTHORN_KEY, and a local app
// that checks every forwarded request with Stripe's own verifier.

const BIN = join(PACKAGE_ROOT, 'bin', 'run.js');
const SIM = 'simulator.posthorn.test';
const stripe = new Stripe('sk_test_x', { telemetry: false });

/** What the simulator emits for delivered@ (lifecycle-outcomes.ts): sent, then delivered. */
const DELIVERED_EVENTS = ['email.sent', 'email.delivered'];

interface Hit {
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  verified: { type: string; data: { email_id: string } } | null;
  error: string | null;
}

/** A local app at /hook that verifies each request with the secret it is given, and answers 202. */
async function startApp(): Promise<{ url: string; hits: Hit[]; secret: { value: string }; stop(): Promise<void> }> {
  const hits: Hit[] = [];
  const secret = { value: '' };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const hit: Hit = { path: req.url ?? '', headers: req.headers, rawBody, verified: null, error: null };
      try {
        hit.verified = stripe.webhooks.constructEvent(
          rawBody,
          req.headers['service-signature'] as string,
          secret.value,
        ) as unknown as Hit['verified'];
      } catch (e) {
        hit.error = (e as Error).message;
      }
      hits.push(hit);
      res.writeHead(hit.verified ? 202 : 400).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    hits,
    secret,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface ListenProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

/** `posthorn listen …` with only the POSTHORN_ variables given (none of the developer's shell). */
function listen(args: string[], env: Record<string, string>): ListenProcess {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('POSTHORN_')));
  const child = spawn(process.execPath, [BIN, 'listen', ...args], {
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** The endpoint and secret the CLI printed once it is connected. */
async function ready(l: ListenProcess): Promise<{ endpointId: string; secret: string }> {
  return waitFor(
    async () => {
      if (l.child.exitCode !== null) throw new Error(`listen exited with ${l.child.exitCode}: ${l.stderr()}`);
      const secret = /Signing secret: (whsec_\S+)/.exec(l.stdout())?.[1];
      const endpointId = /Endpoint: +(whe_[0-9a-z]+)/.exec(l.stdout())?.[1];
      return secret && endpointId && l.stdout().includes('Ctrl-C') ? { endpointId, secret } : null;
    },
    15_000,
    'posthorn listen to be ready',
  );
}

describe('posthorn listen (docs/webhooks.md)', function () {
  this.timeout(120_000);
  let serve: ServeProcess;
  let config: string;
  let key: string;
  let api: Client;
  let otherKey: string;
  const running: ListenProcess[] = [];

  const start = (args: string[], env: Record<string, string> = { POSTHORN_KEY: key }) => {
    const l = listen([...args, '--api-url', serve.baseUrl], env);
    running.push(l);
    return l;
  };
  const send = async (to = `delivered@${SIM}`) => {
    const res = await api.post('/v1/emails', { from: 'a@example.test', to: [to], subject: 'Listen', text: 'hi' });
    expect(res.status, res.text).to.equal(202);
    return res.body.id as string;
  };
  const endpointIds = async () => ((await api.get('/v1/webhooks')).body.data as Array<{ id: string }>).map((e) => e.id);

  async function projectKey(name: string): Promise<string> {
    const project = (await runCli(['project', 'create', '--name', name, '--approved', '--json', '--config', config]))
      .json;
    return (await runCli(['key', 'create', '--project', project.id, '--mode', 'test', '--json', '--config', config]))
      .json.key as string;
  }

  before(async function () {
    config = writeConfig().path;
    serve = await startServe(config);
    key = await projectKey('listen');
    otherKey = await projectKey('someone-else');
    api = client(serve.baseUrl, key);
  });
  afterEach(async function () {
    // stopped as a user would: each deletes its endpoint before it exits
    for (const l of running.splice(0)) {
      if (l.child.exitCode === null && l.child.signalCode === null) l.child.kill('SIGTERM');
      await l.exited;
    }
  });
  after(async function () {
    await serve?.stop();
  });

  context('with --forward-to a local app', function () {
    it("forwards every event of a send with the body and signed headers of a real delivery, and prints a line per event with the app's status", async function () {
      const app = await startApp();
      try {
        const l = start(['--forward-to', app.url]);
        const { endpointId, secret } = await ready(l);
        app.secret.value = secret;
        expect(await endpointIds()).to.include(endpointId);
        const emailId = await send();
        const ofEmail = () => app.hits.filter((h) => h.rawBody.includes(emailId));
        await waitFor(
          async () => ofEmail().length >= DELIVERED_EVENTS.length,
          15_000,
          'the events of the send at the app',
        );
        const hits = ofEmail();
        expect(hits.map((h) => h.error)).to.deep.equal(DELIVERED_EVENTS.map(() => null));
        expect(hits.map((h) => h.verified!.type)).to.deep.equal(DELIVERED_EVENTS);
        for (const h of hits) {
          expect(h.path).to.equal('/hook');
          expect(h.headers['content-type']).to.equal('application/json');
          expect(h.headers['user-agent']).to.match(/^Posthorn\/\S+ \(\+webhooks\)$/);
          expect(h.headers['service-event-id']).to.equal(JSON.parse(h.rawBody).id);
          expect(h.headers['service-delivery-attempt']).to.equal('1');
          expect(h.verified!.data.email_id).to.equal(emailId);
        }
        // one line per event, with the app's status code
        await waitFor(
          async () =>
            DELIVERED_EVENTS.every((t) =>
              new RegExp(`${t.replace('.', '\\.')} +${emailId} +delivered@${SIM} +→ 202`).test(l.stdout()),
            ),
          5_000,
          `a line per event:\n${l.stdout()}`,
        );
        // the appliance's delivery log shows the endpoint's attempts as any other's
        const log = (await api.get(`/v1/webhooks/${endpointId}/deliveries`)).body.data as Array<{
          status: string;
          last_status_code: number;
        }>;
        expect(log.map((d) => [d.status, d.last_status_code])).to.deep.equal(
          DELIVERED_EVENTS.map(() => ['succeeded', 200]),
        );

        l.child.kill('SIGTERM');
        expect(await l.exited).to.equal(0);
        expect(await endpointIds()).to.not.include(endpointId);
      } finally {
        await app.stop();
      }
    });

    it('prints the connection error when the local app is not there, and the delivery still succeeds at the appliance', async function () {
      const app = await startApp();
      await app.stop();
      const l = start(['--forward-to', app.url]);
      const { endpointId } = await ready(l);
      const emailId = await send();
      await waitFor(
        async () => new RegExp(`email\\.delivered +${emailId} .*→ error: ECONNREFUSED`).test(l.stdout()),
        15_000,
        `the error on the event's line:\n${l.stdout()}`,
      );
      expect(await endpointIds()).to.include(endpointId);
    });
  });

  context('when the CLI goes away', function () {
    it('SIGKILL: the appliance deletes the endpoint when the stream closes', async function () {
      const l = start([]);
      const { endpointId } = await ready(l);
      expect(await endpointIds()).to.include(endpointId);
      l.child.kill('SIGKILL');
      await l.exited;
      await waitFor(async () => !(await endpointIds()).includes(endpointId), 5_000, 'the endpoint to be deleted');
      // a client gone mid-stream is how a stream ends: no error output
      expect(serve.output()).to.not.match(/Premature close|"level":50/);
    });

    it('the endpoint deleted elsewhere (DELETE, the dashboard): the CLI says so, and exits 1 with code endpoint_deleted', async function () {
      const l = start([]);
      const json = start(['--json']);
      const { endpointId } = await ready(l);
      const jsonId = await waitFor(
        async () =>
          json.stdout().includes('\n') ? (JSON.parse(json.stdout().split('\n')[0]).endpoint_id as string) : null,
        15_000,
        'the first JSON line',
      );
      for (const id of [endpointId, jsonId]) expect((await api.delete(`/v1/webhooks/${id}`)).status).to.equal(200);
      expect(await l.exited).to.equal(1);
      expect(l.stderr()).to.include(
        `the endpoint was deleted (by DELETE /v1/webhooks/${endpointId} or the dashboard); posthorn listen stopped`,
      );
      expect(await json.exited).to.equal(1);
      expect(JSON.parse(json.stderr()).error.code).to.equal('endpoint_deleted');
    });

    it('SIGINT: the CLI deletes its endpoint and exits 0', async function () {
      const l = start([]);
      const { endpointId } = await ready(l);
      l.child.kill('SIGINT');
      expect(await l.exited).to.equal(0);
      expect(await endpointIds()).to.not.include(endpointId);
    });
  });

  context('--events and --json', function () {
    it('gets only the named types, one JSON document per line: the payload and its headers', async function () {
      const l = start(['--events', 'email.delivered', '--json']);
      const first = await waitFor(
        async () => (l.stdout().includes('\n') ? JSON.parse(l.stdout().split('\n')[0]) : null),
        15_000,
        'the first JSON line',
      );
      expect(first).to.include({ object: 'listen', forward_to: null });
      expect(first.secret).to.match(/^whsec_/);
      expect(first.events).to.deep.equal(['email.delivered']);
      const emailId = await send();
      const lines = () =>
        l
          .stdout()
          .trim()
          .split('\n')
          .slice(1)
          .map((s) => JSON.parse(s));
      await waitFor(
        async () => lines().some((d) => d.payload.data.email_id === emailId),
        15_000,
        'the delivered event',
      );
      // what was sent before it, for the same email, would have come first
      await new Promise((r) => setTimeout(r, 500));
      const ofEmail = lines().filter((d) => d.payload.data.email_id === emailId);
      expect(ofEmail.map((d) => d.payload.type)).to.deep.equal(['email.delivered']);
      const [doc] = ofEmail;
      expect(doc.headers['Service-Event-Id']).to.equal(doc.payload.id);
      expect(doc.headers['Service-Signature']).to.match(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(
        stripe.webhooks.constructEvent(JSON.stringify(doc.payload), doc.headers['Service-Signature'], first.secret).id,
      ).to.equal(doc.payload.id);
    });

    it('without --events subscribes to what an endpoint created without events gets', async function () {
      const l = start(['--json']);
      const first = await waitFor(
        async () => (l.stdout().includes('\n') ? JSON.parse(l.stdout().split('\n')[0]) : null),
        15_000,
        'the first JSON line',
      );
      expect(first.events).to.deep.equal([...DEFAULT_SUBSCRIPTION]);
    });
  });

  context('refusals', function () {
    it('without a key: a clear error naming --key and POSTHORN_KEY, and no endpoint', async function () {
      const before = await endpointIds();
      const l = start([], {});
      expect(await l.exited).to.not.equal(0);
      expect(l.stderr()).to.include('--key').and.include('POSTHORN_KEY');
      const json = start(['--json'], {});
      expect(await json.exited).to.not.equal(0);
      expect(JSON.parse(json.stderr()).error.code).to.equal('usage_error');
      expect(await endpointIds()).to.deep.equal(before);
    });

    it('with a key the appliance does not know: its 401 as the error', async function () {
      const l = start(['--json'], { POSTHORN_KEY: `ph_test_${'x'.repeat(40)}` });
      expect(await l.exited).to.not.equal(0);
      expect(JSON.parse(l.stderr()).error.code).to.equal('unauthorized');
    });

    it("another project's key cannot open the stream of this endpoint: 404", async function () {
      const l = start([]);
      const { endpointId } = await ready(l);
      const other = client(serve.baseUrl, otherKey);
      expectError(await other.get(`/v1/webhooks/${endpointId}/listen`), 404, 'not_found');
      expectError(await other.delete(`/v1/webhooks/${endpointId}`), 404, 'not_found');
      // and this project cannot open a second stream of it
      expectError(await api.get(`/v1/webhooks/${endpointId}/listen`), 409, 'conflict');
      expect(await endpointIds()).to.include(endpointId);
    });

    it('the public create and update still take https urls only: no listen marker', async function () {
      expectError(
        await api.post('/v1/webhooks', { url: 'posthorn-listen:whe_01m8kgqmmt0epte9am8zd0vh33' }),
        400,
        'validation_error',
        'url',
      );
      const l = start([]);
      const { endpointId } = await ready(l);
      expectError(
        await api.patch(`/v1/webhooks/${endpointId}`, { url: `posthorn-listen:${endpointId}x` }),
        400,
        'validation_error',
        'url',
      );
      expectError(
        await api.patch(`/v1/webhooks/${endpointId}`, { url: 'http://127.0.0.1:9/hook' }),
        400,
        'validation_error',
        'url',
      );
    });
  });
});

describe('posthorn serve on SQLite and leftover listen endpoints', function () {
  this.timeout(120_000);

  it('a restart after kill -9 deletes the listen endpoints the dead process had', async function () {
    const config = writeConfig().path;
    let serve = await startServe(config);
    const key = serve.output().match(/ph_test_[A-Za-z0-9]{40}/)![0];
    try {
      const l = listen(['--api-url', serve.baseUrl], { POSTHORN_KEY: key });
      const { endpointId } = await ready(l);
      serve.child.kill('SIGKILL');
      await serve.exited;
      // the CLI tells that its connection is gone, and stops
      expect(await l.exited).to.not.equal(0);
      expect(l.stderr()).to.include('connection');
      serve = await startServe(config);
      const list = (await client(serve.baseUrl, key).get('/v1/webhooks')).body.data as Array<{ id: string }>;
      expect(list.map((e) => e.id)).to.not.include(endpointId);
    } finally {
      if (serve.child.exitCode === null && serve.child.signalCode === null) await serve.stop();
    }
  });
});

/** GET /v1/webhooks/{id}/listen read as the CLI reads it. */
async function openStream(baseUrl: string, key: string, endpointId: string) {
  const res = await fetch(`${baseUrl}/v1/webhooks/${endpointId}/listen`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const frames: ListenFrame[] = [];
  let text = '';
  const reader = new EventStreamReader();
  const decoder = new TextDecoder();
  const ended = (async () => {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      const s = decoder.decode(chunk, { stream: true });
      text += s;
      frames.push(...reader.push(s));
    }
  })().catch(() => undefined);
  return { res, frames, text: () => text, ended };
}

eachDatabase('the listen routes, the dispatcher in the same process (docs/webhooks.md)', (db) => {
  let api: TestApi;
  let t: Tenant;

  before(async function () {
    // allow_private: an https endpoint at localhost, which is no listen endpoint
    api = await startTestApi(
      db().store,
      { network: { allow_private: true }, webhooks: { retry_schedule: ['0s', '1s', '1s', '1s'] } },
      { roles: { mta: true, webhooks: true } },
    );
    t = await api.tenant();
  });
  after(async function () {
    await api.stop();
  });

  const deliveriesOf = async (endpointId: string) =>
    (await t.api.get(`/v1/webhooks/${endpointId}/deliveries`)).body.data as Array<{
      status: string;
      attempts: number;
      last_status_code: number | null;
      last_error: string | null;
      event_id: string;
    }>;

  it('fails an attempt while no stream is connected and retries it on schedule: it arrives once the stream is open', async function () {
    const e = (await t.api.post('/v1/webhooks/listen', { events: ['email.delivered'] })).body;
    expect(e.url).to.equal(`posthorn-listen:${e.id}`);
    expect(e.secret).to.match(/^whsec_/);
    await t.api.post('/v1/emails', { from: 'a@example.test', to: [`delivered@${SIM}`], subject: 'Early', text: 'x' });
    const failed = await waitFor(
      async () => (await deliveriesOf(e.id)).find((d) => d.attempts >= 1) ?? null,
      10_000,
      'a first attempt',
    );
    expect(failed.last_error).to.equal('no posthorn listen is connected to this endpoint');
    const stream = await openStream(api.baseUrl, t.key, e.id);
    expect(stream.res.status).to.equal(200);
    expect(stream.res.headers.get('content-type')).to.match(/^text\/event-stream/);
    await waitFor(async () => stream.frames.length >= 1, 10_000, 'the retried delivery on the stream');
    const [frame] = stream.frames;
    expect(JSON.parse(frame.body).id).to.equal(failed.event_id);
    expect(frame.headers['Service-Delivery-Attempt']).to.equal(String(failed.attempts + 1));
    await waitFor(
      async () => (await deliveriesOf(e.id))[0]?.status === 'succeeded',
      5_000,
      'the delivery recorded as succeeded',
    );
    // a DELETE ends the stream
    expect((await t.api.delete(`/v1/webhooks/${e.id}`)).status).to.equal(200);
    await stream.ended;
  });

  it('deletes the endpoint when the stream closes, and refuses a stream for an endpoint that is not a listen one', async function () {
    const e = (await t.api.post('/v1/webhooks/listen', {})).body;
    expect(e.events).to.deep.equal([...DEFAULT_SUBSCRIPTION]);
    const controller = new AbortController();
    const res = await fetch(`${api.baseUrl}/v1/webhooks/${e.id}/listen`, {
      headers: { authorization: `Bearer ${t.key}` },
      signal: controller.signal,
    });
    expect(res.status).to.equal(200);
    controller.abort();
    await waitFor(async () => (await t.api.get(`/v1/webhooks/${e.id}`)).status === 404, 5_000, 'the endpoint deleted');
    expectError(await t.api.get('/v1/webhooks/whe_01m8kgqmmt0epte9am8zd0vh33/listen'), 404, 'not_found');
    const https = (await t.api.post('/v1/webhooks', { url: 'https://localhost/hook', events: ['domain.delisted'] }))
      .body;
    expectError(await t.api.get(`/v1/webhooks/${https.id}/listen`), 409, 'conflict');
  });

  it('takes 10 listen endpoints per project: the 11th is 409, saying how many are open and when they go', async function () {
    const u = await api.tenant();
    expect((await u.api.post('/v1/webhooks', { url: 'https://localhost/hook' })).status).to.equal(201);
    const made: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await u.api.post('/v1/webhooks/listen', {});
      expect(res.status, res.text).to.equal(201);
      made.push(res.body.id as string);
    }
    const error = expectError(await u.api.post('/v1/webhooks/listen', {}), 409, 'conflict');
    expect(error.message)
      .to.include('10 posthorn listen endpoints open')
      .and.include('deleted when its posthorn listen stops');
    // another project has its own ten
    expect((await t.api.post('/v1/webhooks/listen', {})).status).to.equal(201);
    expect((await u.api.delete(`/v1/webhooks/${made[0]}`)).status).to.equal(200);
    expect((await u.api.post('/v1/webhooks/listen', {})).status).to.equal(201);
  });

  it('refuses unknown fields and event types in the create', async function () {
    expectError(
      await t.api.post('/v1/webhooks/listen', { url: 'https://hooks.example.com' }),
      400,
      'validation_error',
      'url',
    );
    expectError(await t.api.post('/v1/webhooks/listen', { events: ['email.nope'] }), 400, 'validation_error');
  });
});

/** The API alone, in this process, with a ListenHub of short periods: what takes 15 s and 60 s in serve takes a fraction of a second. */
async function startWithHub(store: Store, limits: Partial<ListenLimits>) {
  const config = buildConfig(
    { data_dir: '/nonexistent', limits: { requests_per_second: 10_000 }, log: { level: 'silent' } },
    null,
  );
  const core = buildCore(config, store, silentLogger(), systemClock, {
    listenHub: new ListenHub(silentLogger(), limits),
  });
  const running = await startRoles(config, core, { api: true }, { host: '127.0.0.1', port: 0 });
  return { baseUrl: `http://127.0.0.1:${running.api!.port}`, deps: core.deps, stop: () => running.stop() };
}

let projects = 0;

/** A project with two keys of every scope. */
async function projectWithKeys(deps: CoreDeps, baseUrl: string) {
  const project = await createProject(deps, { name: `listen-${++projects}-${Date.now()}`, approved: true });
  const key = async () => {
    const { key: k, secret } = await createKey(deps, { projectId: project.id, mode: 'test' });
    return { id: k.id, secret, api: client(baseUrl, secret) };
  };
  return { project, a: await key(), b: await key() };
}

eachDatabase('the listen routes: revocation, suspension and the unconnected endpoint (docs/webhooks.md)', (db) => {
  const HEARTBEAT_MS = 100;
  const CONNECT_WITHIN_MS = 400;
  let api: Awaited<ReturnType<typeof startWithHub>>;

  before(async function () {
    api = await startWithHub(db().store, { heartbeatMs: HEARTBEAT_MS, connectWithinMs: CONNECT_WITHIN_MS });
  });
  after(async function () {
    await api.stop();
  });

  /** An endpoint made with key `k`, its stream opened with the same key. */
  async function listening(k: { secret: string; api: Client }) {
    const e = (await k.api.post('/v1/webhooks/listen', {})).body as { id: string };
    const stream = await openStream(api.baseUrl, k.secret, e.id);
    expect(stream.res.status).to.equal(200);
    return { id: e.id, stream };
  }
  const endsWithin = (s: { ended: Promise<unknown> }, ms: number) =>
    Promise.race([s.ended.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), ms))]);

  it('the key that opened the stream revoked (DELETE /v1/api-keys/{id} with another key): the stream ends within a heartbeat, and the endpoint is gone', async function () {
    const { a, b } = await projectWithKeys(api.deps, api.baseUrl);
    const { id, stream } = await listening(b);
    await new Promise((r) => setTimeout(r, 2 * HEARTBEAT_MS));
    expect((await a.api.delete(`/v1/api-keys/${b.id}`)).status).to.equal(200);
    expect(await endsWithin(stream, 10 * HEARTBEAT_MS), 'the stream to end').to.equal(true);
    expect(stream.text()).to.match(/: end: key_revoked\n\n$/);
    await waitFor(async () => (await a.api.get(`/v1/webhooks/${id}`)).status === 404, 2_000, 'the endpoint deleted');
  });

  it('the project suspended: the stream ends within a heartbeat, and the endpoint is gone', async function () {
    const { project, a } = await projectWithKeys(api.deps, api.baseUrl);
    const { id, stream } = await listening(a);
    await setProject(api.deps, project.id, { suspended: true });
    expect(await endsWithin(stream, 10 * HEARTBEAT_MS), 'the stream to end').to.equal(true);
    expect(stream.text()).to.match(/: end: project_suspended\n\n$/);
    await setProject(api.deps, project.id, { suspended: false });
    await waitFor(async () => (await a.api.get(`/v1/webhooks/${id}`)).status === 404, 2_000, 'the endpoint deleted');
  });

  it('the endpoint deleted by another process: the stream ends within a heartbeat, saying so', async function () {
    const { a } = await projectWithKeys(api.deps, api.baseUrl);
    const { id, stream } = await listening(a);
    // no DELETE through this process's API: its hub is not told
    await api.deps.store.tx((trx) => deleteEndpoint(trx, id));
    expect(await endsWithin(stream, 10 * HEARTBEAT_MS), 'the stream to end').to.equal(true);
    expect(stream.text()).to.match(/: end: endpoint_deleted\n\n$/);
  });

  it('an endpoint whose stream has not connected within the delay is deleted; one whose stream did is kept', async function () {
    const { a } = await projectWithKeys(api.deps, api.baseUrl);
    const idle = (await a.api.post('/v1/webhooks/listen', {})).body.id as string;
    const { id: connected, stream } = await listening(a);
    expect((await a.api.get(`/v1/webhooks/${idle}`)).status).to.equal(200);
    await waitFor(
      async () => (await a.api.get(`/v1/webhooks/${idle}`)).status === 404,
      5 * CONNECT_WITHIN_MS,
      'the unconnected endpoint deleted',
    );
    await new Promise((r) => setTimeout(r, CONNECT_WITHIN_MS));
    expect((await a.api.get(`/v1/webhooks/${connected}`)).status).to.equal(200);
    expect(await endsWithin(stream, 10)).to.equal(false);
    expect((await a.api.delete(`/v1/webhooks/${connected}`)).status).to.equal(200);
    await stream.ended;
  });
});
