import { expect } from 'chai';
import { ROUTES } from '../../src/api/routes.js';
import { precompile } from '../../src/lib/validate.js';

// The app compiles a route's body and query schemas at the route's first request; a schema ajv
// refuses (strict mode: an unknown keyword, a type mistake) must fail here, not a user's request.
describe('every route schema compiles', function () {
  it('compiles the body and query schema of each registered route', function () {
    const refused: string[] = [];
    let compiled = 0;
    for (const r of ROUTES)
      for (const [kind, schema] of [
        ['body', r.body],
        ['query', r.query],
      ] as const) {
        if (!schema) continue;
        try {
          precompile(kind, schema);
          compiled++;
        } catch (e) {
          refused.push(`${r.method} ${r.path} ${kind}: ${(e as Error).message}`);
        }
      }
    expect(refused).to.deep.equal([]);
    expect(compiled).to.be.greaterThan(50);
  });
});
