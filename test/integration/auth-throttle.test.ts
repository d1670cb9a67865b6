import { expect } from 'chai';
import { request } from 'node:http';
import { freshSqlite, type TestDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { expectError } from '../helpers/assert.js';
import type { Reply } from '../helpers/http.js';
import { parseMetrics, valueOf } from '../helpers/prometheus.js';

const WINDOW_S = 15 * 60;
/** window / failures: one try comes back this often */
const ONE_TRY_S = WINDOW_S / 3;

// Issue 38: a client address that presents wrong keys is refused for a while,
// on the /v1 bearer and the dashboard sign-in alike, with one count per process.
describe('failed authentications per client address (limits.auth_failures_per_ip)', function () {
  let db: TestDatabase;
  let api: TestApi;
  let t: Tenant;
  let offset = 0;
  before(async function () {
    db = freshSqlite();
    await db.store.migrateLatest();
  });
  after(async function () {
    await db.drop();
  });
  beforeEach(async function () {
    offset = 0;
    // an app of its own per test: the counts are the process's, kept by its AuthThrottle
    api = await startTestApi(
      db.store,
      { limits: { requests_per_second: 10_000, auth_failures_per_ip: 3, auth_failure_window: '15m' } },
      { clock: { now: () => Date.now() + offset } },
    );
    t = await api.tenant();
  });
  afterEach(async function () {
    await api.stop();
  });

  /** An HTTP request from the loopback address `from` (the server sees it as the client's address). */
  function send(
    path: string,
    o: {
      from?: string;
      key?: string;
      method?: string;
      headers?: Record<string, string>;
      form?: Record<string, string>;
    } = {},
  ): Promise<Reply> {
    const body = o.form ? new URLSearchParams(o.form).toString() : undefined;
    const headers: Record<string, string> = {
      ...(o.key ? { authorization: `Bearer ${o.key}` } : {}),
      ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      ...o.headers,
    };
    const url = new URL(api.baseUrl + path);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: o.method ?? (body ? 'POST' : 'GET'),
          headers,
          localAddress: o.from ?? '127.0.0.1',
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const h = new Headers();
            for (const [name, v] of Object.entries(res.headers))
              if (v !== undefined) h.set(name, Array.isArray(v) ? v.join(', ') : v);
            let parsed: unknown;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              parsed = undefined;
            }
            resolve({ status: res.statusCode!, headers: h, body: parsed, text });
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  const unknownKey = `ph_test_${'A'.repeat(40)}`;
  const signIn = (key: string, from?: string) =>
    send('/dashboard/sign-in', { form: { key }, ...(from ? { from } : {}) });

  /** Three wrong keys from `from`, each 401: a malformed one, one nobody issued, a revoked one. */
  async function failThrice(from = '127.0.0.1'): Promise<void> {
    const revoked = await t.newKey();
    expect((await t.api.delete(`/v1/api-keys/${revoked.id}`)).status).to.equal(200);
    for (const key of ['ph_test_short', unknownKey, revoked.key])
      expectError(await send('/v1/emails', { key, from }), 401, 'unauthorized');
  }

  const metrics = async () => parseMetrics((await send('/metrics')).text);

  it('answers 401 to each of the first wrong keys, then 429 rate_limited with Retry-After, whatever key is sent', async function () {
    await failThrice();
    const refused = await send('/v1/emails', { key: unknownKey });
    expectError(refused, 429, 'rate_limited');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(refused.headers.get('retry-after')).to.match(/^[1-9][0-9]*$/);
    expect(retryAfter).to.be.within(1, ONE_TRY_S);
    // a header that is no bearer is a try too
    expectError(await send('/v1/emails', { headers: { authorization: `Basic ${t.key}` } }), 429, 'rate_limited');
  });

  it('does not count a request without a key as a guess: it stays 401, and so do the next three wrong keys', async function () {
    for (let i = 0; i < 20; i++) expectError(await send('/v1/emails'), 401, 'unauthorized');
    await failThrice();
    expectError(await send('/v1/emails', { key: unknownKey }), 429, 'rate_limited');
    // while refused, a request without a key is still told what it lacks
    expectError(await send('/v1/emails'), 401, 'unauthorized');
  });

  it('lets through a key this process has seen succeed, and refuses a real key it has not seen without looking at it', async function () {
    expect((await send('/v1/emails', { key: t.key })).status).to.equal(200);
    const unseen = await t.newKey();
    // failThrice revokes a key through the API too, which has every key read again: t's is still known
    await failThrice();
    // a minute later: the key cache (200 ms) has long expired, the key is still known to have succeeded
    offset += 60_000;
    for (let i = 0; i < 3; i++) expect((await send('/v1/emails', { key: t.key })).status).to.equal(200);
    expectError(await send('/v1/emails', { key: unseen.key }), 429, 'rate_limited');
    // the refusal cost the unseen key nothing: from another address it works
    expect((await send('/v1/emails', { key: unseen.key, from: '127.0.0.2' })).status).to.equal(200);
  });

  it('counts failures and refusals in /metrics under listener api, and leaves routes without a key alone', async function () {
    const before = await metrics();
    await failThrice();
    for (let i = 0; i < 2; i++) expectError(await send('/v1/emails', { key: unknownKey }), 429, 'rate_limited');
    const after = await metrics();
    const moved = (name: string, listener: string) =>
      valueOf(after, name, { listener }) - valueOf(before, name, { listener });
    expect(moved('posthorn_auth_failures_total', 'api')).to.equal(3);
    expect(moved('posthorn_auth_refusals_total', 'api')).to.equal(2);
    expect(moved('posthorn_auth_failures_total', 'dashboard')).to.equal(0);
    for (const path of ['/healthz', '/v1/openapi.json', '/metrics'])
      expect((await send(path)).status, path).to.equal(200);
    expect((await send('/dashboard/sign-in')).status).to.equal(200);
  });

  it('keeps client addresses apart, and trusts no X-Forwarded-For', async function () {
    await failThrice();
    expectError(await send('/v1/emails', { key: unknownKey }), 429, 'rate_limited');
    expectError(
      await send('/v1/emails', { key: unknownKey, headers: { 'x-forwarded-for': '198.51.100.7' } }),
      429,
      'rate_limited',
    );
    // 127.0.0.2 is another client: its first wrong key is a 401, a real key it sends works
    expectError(await send('/v1/emails', { key: unknownKey, from: '127.0.0.2' }), 401, 'unauthorized');
    expect((await send('/v1/emails', { key: (await t.newKey()).key, from: '127.0.0.2' })).status).to.equal(200);
  });

  context('when time passes (the app runs on an injected clock)', function () {
    it('gives one try back after Retry-After and every try back after the window', async function () {
      await failThrice();
      const refused = await send('/v1/emails', { key: unknownKey });
      expectError(refused, 429, 'rate_limited');
      offset += Number(refused.headers.get('retry-after')) * 1000;
      expectError(await send('/v1/emails', { key: unknownKey }), 401, 'unauthorized');
      expectError(await send('/v1/emails', { key: unknownKey }), 429, 'rate_limited');
      offset += WINDOW_S * 1000;
      for (let i = 0; i < 3; i++) expectError(await send('/v1/emails', { key: unknownKey }), 401, 'unauthorized');
      expectError(await send('/v1/emails', { key: unknownKey }), 429, 'rate_limited');
    });
  });

  context('the dashboard sign-in', function () {
    it('refuses the address with 429, the wait on the page and Retry-After, after three wrong keys, and counts under listener dashboard', async function () {
      const before = await metrics();
      for (const key of ['nonsense', unknownKey, 'ph_live_nope']) {
        const r = await signIn(key);
        expect(r.status).to.equal(401);
        expect(r.text).to.include('This key is not valid');
      }
      const unseen = await t.newKey();
      const refused = await signIn(unseen.key);
      expect(refused.status).to.equal(429);
      expect(refused.headers.get('retry-after')).to.equal(String(ONE_TRY_S));
      expect(refused.headers.get('set-cookie')).to.equal(null);
      expect(refused.text).to.include('Too many failed sign-ins from your address. Try again in 5 minutes.');
      expect(refused.headers.get('content-type')).to.include('text/html');
      const after = await metrics();
      const moved = (name: string, listener: string) =>
        valueOf(after, name, { listener }) - valueOf(before, name, { listener });
      expect(moved('posthorn_auth_failures_total', 'dashboard')).to.equal(3);
      expect(moved('posthorn_auth_refusals_total', 'dashboard')).to.equal(1);
      expect(moved('posthorn_auth_failures_total', 'api')).to.equal(0);
      // the other address signs in
      expect((await signIn(unseen.key, '127.0.0.2')).status).to.equal(303);
    });

    it('shares the count with the API, and signs in a key seen succeed while the address is refused', async function () {
      expect((await send('/v1/emails', { key: t.key })).status).to.equal(200);
      expectError(await send('/v1/emails', { key: unknownKey }), 401, 'unauthorized');
      expectError(await send('/v1/emails', { key: 'ph_test_short' }), 401, 'unauthorized');
      expect((await signIn(unknownKey)).status).to.equal(401);
      expect((await signIn(unknownKey)).status).to.equal(429);
      expectError(await send('/v1/emails', { key: unknownKey }), 429, 'rate_limited');
      const known = await signIn(t.key);
      expect(known.status).to.equal(303);
      expect(known.headers.get('set-cookie')).to.match(/^posthorn_session=/);
    });

    it('gives the sign-in back once the window has passed', async function () {
      for (let i = 0; i < 3; i++) expect((await signIn(unknownKey)).status).to.equal(401);
      expect((await signIn(unknownKey)).status).to.equal(429);
      offset += WINDOW_S * 1000;
      const unseen = await t.newKey();
      expect((await signIn(unseen.key)).status).to.equal(303);
    });
  });
});
