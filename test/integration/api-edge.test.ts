import { expect } from 'chai';
import { openStore } from '../../src/store/store.js';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { expectError } from '../helpers/assert.js';
import { client } from '../helpers/http.js';
import { MAX_BODY_BYTES } from '../../src/api/middleware/body.js';

eachDatabase('API edge', (db) => {
  let api: TestApi;
  let t: Tenant;
  before(async function () {
    api = await startTestApi(db().store);
    t = await api.tenant();
  });
  after(async function () {
    await api.stop();
  });

  describe('authentication (interface §5)', function () {
    it('answers 401 unauthorized without a key', async function () {
      expectError(await api.anonymous.get('/v1/emails'), 401, 'unauthorized');
    });

    it('answers 401 for a malformed header or key', async function () {
      expectError(
        await api.anonymous.raw('GET', '/v1/emails', { headers: { authorization: `Basic ${t.key}` } }),
        401,
        'unauthorized',
      );
      expectError(await client(api.baseUrl, 'ph_test_short').get('/v1/emails'), 401, 'unauthorized');
      expectError(await client(api.baseUrl, `${t.key}x`).get('/v1/emails'), 401, 'unauthorized');
    });

    it('answers 401 for a well-formed key nobody issued', async function () {
      expectError(await client(api.baseUrl, `ph_test_${'A'.repeat(40)}`).get('/v1/emails'), 401, 'unauthorized');
    });

    it('answers 401 once a key is revoked, through the API', async function () {
      const other = await t.newKey();
      expect((await other.api.get('/v1/emails')).status).to.equal(200);
      const res = await t.api.delete(`/v1/api-keys/${other.id}`);
      expect(res.status).to.equal(200);
      expect(res.body.revoked_at).to.be.a('string');
      expectError(await other.api.get('/v1/emails'), 401, 'unauthorized');
    });

    it('answers 403 account_suspended on every call of a suspended project', async function () {
      const s = await api.tenant();
      expect((await s.api.get('/v1/emails')).status).to.equal(200);
      await s.suspend();
      expectError(await s.api.get('/v1/emails'), 403, 'account_suspended');
      expectError(await s.api.get('/v1/api-keys'), 403, 'account_suspended');
      expectError(await s.api.post('/v1/api-keys', {}), 403, 'account_suspended');
    });
  });

  describe('error shape and request ids (CONTRACT §4)', function () {
    it('puts a Request-Id header on successful answers too', async function () {
      const res = await t.api.get('/v1/emails');
      expect(res.status).to.equal(200);
      expect(res.headers.get('request-id')).to.match(/^req_[0-9a-z]{26}$/);
    });

    it('gives every request its own id', async function () {
      const [a, b] = await Promise.all([t.api.get('/v1/emails'), t.api.get('/v1/emails')]);
      expect(a.headers.get('request-id')).to.not.equal(b.headers.get('request-id'));
    });

    it('answers 404 not_found for an unknown route', async function () {
      expectError(await t.api.get('/v1/nothing-here'), 404, 'not_found');
      expectError(await api.anonymous.get('/nothing'), 404, 'not_found');
    });

    it('answers 401 before routing: without a key, /v1 does not tell which routes exist', async function () {
      expectError(await api.anonymous.get('/v1/nothing-here'), 401, 'unauthorized');
      expectError(await api.anonymous.raw('PUT', '/v1/emails'), 401, 'unauthorized');
    });

    it('routes paths case-sensitively: /V1/… is no route, with or without a key, and never runs a handler', async function () {
      for (const path of ['/V1/domains', '/V1/DOMAINS', '/V1/webhooks']) {
        expectError(await t.api.raw('GET', path), 404, 'not_found');
        expectError(await api.anonymous.raw('GET', path), 404, 'not_found');
      }
      expectError(
        await api.anonymous.raw('POST', '/V1/webhooks', {
          body: '{}',
          headers: { 'content-type': 'application/json' },
        }),
        404,
        'not_found',
      );
      expectError(await t.api.raw('GET', '/v1/Domains'), 404, 'not_found');
    });

    it('answers a known route with a wrong method 404 not_found (a code of interface §7), with Allow', async function () {
      const res = await t.api.raw('PUT', '/v1/emails');
      expectError(res, 404, 'not_found');
      expect(res.headers.get('allow')).to.include('GET');
      expect(res.headers.get('allow')).to.include('POST');
    });

    it('answers 400 validation_error naming an unknown body field', async function () {
      expectError(await t.api.post('/v1/api-keys', { name: 'x', colour: 'blue' }), 400, 'validation_error', 'colour');
    });

    it('answers 400 validation_error naming a bad array item', async function () {
      expectError(
        await t.api.post('/v1/api-keys', { scopes: ['emails:send', 'emails:fly'] }),
        400,
        'validation_error',
        'scopes[1]',
      );
    });

    it('answers 400 validation_error for malformed JSON', async function () {
      const res = await t.api.raw('POST', '/v1/api-keys', {
        body: '{"name": ',
        headers: { 'content-type': 'application/json' },
      });
      expectError(res, 400, 'validation_error', 'body');
    });

    it('answers 400 validation_error for a body that is not a JSON object', async function () {
      expectError(await t.api.post('/v1/api-keys', ['name']), 400, 'validation_error', 'body');
    });

    it('answers 400 validation_error for a body in another format', async function () {
      const res = await t.api.raw('POST', '/v1/api-keys', {
        body: 'name=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expectError(res, 400, 'validation_error', 'body');
    });

    it('answers 400 validation_error for an oversized body', async function () {
      const big = Buffer.alloc(MAX_BODY_BYTES + 1, 0x20);
      const res = await t.api.raw('POST', '/v1/api-keys', {
        body: big,
        headers: { 'content-type': 'application/json' },
      });
      expectError(res, 400, 'validation_error', 'body');
      expect(res.body.error.message).to.match(/larger than/);
    });

    it('answers 400 validation_error naming a bad query parameter', async function () {
      expectError(await t.api.get('/v1/emails?limit=0'), 400, 'validation_error', 'limit');
      expectError(await t.api.get('/v1/emails?limit=101'), 400, 'validation_error', 'limit');
      expectError(await t.api.get('/v1/emails?status=lost'), 400, 'validation_error', 'status');
      expectError(await t.api.get('/v1/emails?cursor=nope'), 400, 'validation_error', 'cursor');
      expectError(await t.api.get('/v1/emails?colour=blue'), 400, 'validation_error', 'colour');
    });
  });

  describe('health', function () {
    it('answers /healthz without a key', async function () {
      const res = await api.anonymous.get('/healthz');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ status: 'ok' });
    });

    it('answers /readyz 200 when the database is migrated', async function () {
      const res = await api.anonymous.get('/readyz');
      expect(res.status).to.equal(200);
    });
  });
});

eachDatabase('API readiness without a database', (db) => {
  it('answers /readyz 503 when the database does not answer', async function () {
    const other = openStore(db().options);
    const api = await startTestApi(other);
    try {
      expect((await api.anonymous.get('/readyz')).status).to.equal(200);
      await other.close();
      expectError(await api.anonymous.get('/readyz'), 503, 'service_unavailable');
      // /healthz still answers: the process is alive, only not ready
      expect((await api.anonymous.get('/healthz')).status).to.equal(200);
    } finally {
      await api.stop().catch(() => undefined);
    }
  });
});

eachDatabase('API readiness before migrations', (db) => {
  it('answers /readyz 503 while migrations are pending', async function () {
    await db().store.migrateDown();
    const api = await startTestApi(db().store);
    try {
      const res = await api.anonymous.get('/readyz');
      expectError(res, 503, 'service_unavailable');
      expect(res.body.error.message).to.include('0001_foundation');
    } finally {
      await api.stop();
      await db().store.migrateLatest();
    }
  });
});
