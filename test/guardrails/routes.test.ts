import { expect } from 'chai';
import { API_ROUTES, COMPAT_ROUTES } from '../../src/api/routes.js';
import { SCOPES } from '../../src/modules/account/keys/scopes.js';
import { freshSqlite, type TestDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { expectError } from '../helpers/assert.js';

/** A concrete path for a route pattern: /v1/emails/:id → /v1/emails/x */
const concrete = (path: string) => path.replace(/:[a-z_]+/g, 'x');

/** A body schema's object: its items' for an array body (POST /v1/emails/batch). */
const objectOf = (schema: object) => (schema as { items?: object }).items ?? schema;
const isArray = (schema: object | undefined) => Boolean(schema && (schema as { type?: string }).type === 'array');

describe('route table guardrails', function () {
  it('has every /v1 route under a known scope', function () {
    for (const r of API_ROUTES) {
      expect(r.path, `${r.method} ${r.path}`).to.match(/^\/v1\//);
      expect(SCOPES, `${r.method} ${r.path}`).to.include(r.scope);
      expect(r.summary, `${r.method} ${r.path}`).to.be.a('string').and.not.equal('');
    }
  });

  it('rejects unknown fields in every body and query schema', function () {
    for (const r of API_ROUTES) {
      for (const schema of [r.body, r.query]) {
        if (schema)
          expect(
            (objectOf(schema) as { additionalProperties?: unknown }).additionalProperties,
            `${r.method} ${r.path}`,
          ).to.equal(false);
      }
    }
  });

  it('has no two routes with the same method and path', function () {
    const seen = new Set(API_ROUTES.map((r) => `${r.method} ${r.path}`));
    expect(seen.size).to.equal(API_ROUTES.length);
  });

  describe('on the running app', function () {
    let db: TestDatabase;
    let api: TestApi;
    before(async function () {
      db = freshSqlite();
      await db.store.migrateLatest();
      api = await startTestApi(db.store);
    });
    after(async function () {
      await api.stop();
      await db.drop();
    });

    for (const r of API_ROUTES) {
      it(`${r.method} ${r.path}: 401 without a key`, async function () {
        expectError(await api.anonymous.raw(r.method, concrete(r.path)), 401, 'unauthorized');
      });

      it(`${r.method} ${r.path}: 403 forbidden for a key holding every scope but ${r.scope}`, async function () {
        const t = await api.tenant({ scopes: SCOPES.filter((s) => s !== r.scope) });
        const res = await t.api.raw(
          r.method,
          concrete(r.path),
          r.body ? { body: '{}', headers: { 'content-type': 'application/json' } } : {},
        );
        expectError(res, 403, 'forbidden');
        expect(res.body.error.message).to.include(r.scope);
      });

      it(`${r.method} ${r.path}: 403 account_suspended for a suspended project`, async function () {
        const t = await api.tenant();
        await t.suspend();
        expectError(
          await t.api.raw(
            r.method,
            concrete(r.path),
            r.body ? { body: '{}', headers: { 'content-type': 'application/json' } } : {},
          ),
          403,
          'account_suspended',
        );
      });

      if (r.method !== 'GET') {
        it(`${r.method} ${r.path}: 400 naming an unknown body field`, async function () {
          const t = await api.tenant();
          const array = isArray(r.body);
          expectError(
            await t.api.raw(r.method, concrete(r.path), {
              body: array ? '[{"colour": "blue"}]' : '{"colour": "blue"}',
              headers: { 'content-type': 'application/json' },
            }),
            400,
            'validation_error',
            array ? '[0].colour' : 'colour',
          );
        });
      }
    }
  });
});

// The Resend-compatible surface (docs/resend.md): the same keys and scopes as /v1, Resend's errors.
describe('route table guardrails: /resend', function () {
  it('has every /resend route under a known scope, each once', function () {
    for (const r of COMPAT_ROUTES) {
      expect(r.path, `${r.method} ${r.path}`).to.match(/^\/resend\//);
      expect(SCOPES, `${r.method} ${r.path}`).to.include(r.scope);
      expect(r.summary, `${r.method} ${r.path}`).to.be.a('string').and.not.equal('');
    }
    expect(new Set(COMPAT_ROUTES.map((r) => `${r.method} ${r.path}`)).size).to.equal(COMPAT_ROUTES.length);
  });

  describe('on the running app', function () {
    let db: TestDatabase;
    let api: TestApi;
    before(async function () {
      db = freshSqlite();
      await db.store.migrateLatest();
      api = await startTestApi(db.store);
    });
    after(async function () {
      await api.stop();
      await db.drop();
    });

    /** Resend's error body */
    const resendError = (res: { status: number; body: any; text: string }, status: number, name: string) => {
      expect(res.status, res.text).to.equal(status);
      expect(res.body, res.text).to.deep.include({ statusCode: status, name });
      expect(res.body.message).to.be.a('string').and.not.equal('');
    };

    for (const r of COMPAT_ROUTES) {
      it(`${r.method} ${r.path}: 401 missing_api_key without a key`, async function () {
        resendError(await api.anonymous.raw(r.method, concrete(r.path)), 401, 'missing_api_key');
      });

      it(`${r.method} ${r.path}: 401 restricted_api_key for a key holding every scope but ${r.scope}`, async function () {
        const t = await api.tenant({ scopes: SCOPES.filter((s) => s !== r.scope) });
        const res = await t.api.raw(
          r.method,
          concrete(r.path),
          r.body ? { body: isArray(r.body) ? '[]' : '{}', headers: { 'content-type': 'application/json' } } : {},
        );
        resendError(res, 401, 'restricted_api_key');
        expect(res.body.message).to.include(r.scope);
      });

      it(`${r.method} ${r.path}: 403 for a suspended project`, async function () {
        const t = await api.tenant();
        await t.suspend();
        resendError(await t.api.raw(r.method, concrete(r.path)), 403, 'validation_error');
      });
    }
  });
});
