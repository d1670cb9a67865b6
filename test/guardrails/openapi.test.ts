import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { buildApp } from '../../src/api/app.js';
import { apiReference, referenceDocument } from '../../src/api/api-reference.js';
import { PACKAGE_ROOT, PACKAGE_VERSION } from '../../src/config/package-root.js';
import { silentLogger } from '../../src/log/logger.js';
import { systemClock } from '../../src/lib/time.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { freshSqlite, type TestDatabase } from '../helpers/databases.js';

type Doc = {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      {
        operationId: string;
        security: unknown[];
        'x-scope'?: string;
        requestBody?: {
          content: {
            'application/json': {
              schema: { additionalProperties?: boolean; items?: { additionalProperties?: boolean } };
            };
          };
        };
      }
    >
  >;
};

// CONTRACT §5: GET /v1/openapi.json (OpenAPI 3.1, no key), one source with the routes.
describe('the OpenAPI document (issue 23)', function () {
  let db: TestDatabase;
  let api: TestApi;
  let doc: Doc;
  before(async function () {
    db = freshSqlite();
    await db.store.migrateLatest();
    api = await startTestApi(db.store, { http: { public_url: 'https://mail.example.com/' } });
    const res = await api.anonymous.get('/v1/openapi.json');
    expect(res.status, res.text).to.equal(200);
    doc = res.body;
  });
  after(async function () {
    await api.stop();
    await db.drop();
  });

  it('is served without a key and is a valid OpenAPI 3.1 document to a maintained validator', async function () {
    expect(doc.openapi).to.equal('3.1.0');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).to.deep.equal([]);
    expect(result.valid).to.equal(true);
    expect((doc as unknown as { servers: Array<{ url: string }> }).servers).to.deep.equal([
      { url: 'https://mail.example.com' },
    ]);
    // and the validator does refuse a broken one: a query parameter without its schema
    const broken = JSON.parse(JSON.stringify(doc)) as Doc;
    (broken.paths['/v1/emails'].get as Record<string, unknown>).parameters = [{ name: 'limit', in: 'query' }];
    expect((await new Validator().validate(broken)).valid).to.equal(false);
  });

  it('documents every route the app serves, and serves every route it documents', function () {
    const { registered } = buildApp(api.core.services, {
      requestsPerSecond: 1,
      logger: silentLogger(),
      clock: systemClock,
      version: PACKAGE_VERSION,
      publicUrl: null,
      metrics: true,
    });
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`),
    );
    // the Resend-compatible surface is Resend's API, left out of ours (docs/resend.md)
    expect([...documented].sort()).to.deep.equal(registered.filter((r) => !r.includes(' /resend/')).sort());
    expect(registered).to.include('POST /resend/emails');
    for (const must of [
      'GET /v1/suppressions',
      'POST /v1/emails',
      'GET /v1/logs',
      'GET /v1/usage',
      'GET /metrics',
      'GET /v1/openapi.json',
      'GET /healthz',
    ])
      expect(documented).to.include(must);
  });

  it('names the scope of each keyed route and refuses unknown body fields in every request schema', function () {
    const ids = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const where = `${method} ${path}`;
        expect(ids.has(op.operationId), `${where} operationId`).to.equal(false);
        ids.add(op.operationId);
        const keyed = path.startsWith('/v1/') && path !== '/v1/openapi.json';
        expect(op.security, where).to.deep.equal(keyed ? [{ apiKey: [] }] : []);
        if (keyed) expect(op['x-scope'], where).to.match(/^[a-z]+:[a-z]+$/);
        const body = op.requestBody?.content['application/json'].schema;
        // an array body (POST /v1/emails/batch): each item's schema
        if (body) expect((body.items ?? body).additionalProperties, `${where} body`).to.equal(false);
      }
    }
  });

  it('the document in docs/ (openapi.json and its rendered API.md) is what the routes generate (run npm run docs)', function () {
    const fresh = referenceDocument(PACKAGE_VERSION);
    expect(JSON.parse(readFileSync(join(PACKAGE_ROOT, 'docs', 'openapi.json'), 'utf8'))).to.deep.equal(fresh);
    expect(readFileSync(join(PACKAGE_ROOT, 'docs', 'API.md'), 'utf8')).to.equal(`${apiReference(fresh)}\n`);
  });
});
