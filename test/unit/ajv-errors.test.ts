import { expect } from 'chai';
import { Type } from '@sinclair/typebox';
import { validateBody, validateQuery } from '../../src/lib/validate.js';
import { pointerToField } from '../../src/lib/ajv-errors.js';
import { thrownApiError } from '../helpers/assert.js';

const Body = Type.Object(
  {
    to: Type.Array(Type.String({ maxLength: 254 }), { maxItems: 3 }),
    attachments: Type.Optional(
      Type.Array(
        Type.Object({ filename: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false }),
      ),
    ),
  },
  { additionalProperties: false },
);

describe('validation errors', function () {
  it('name array items like to[3]', function () {
    const e = thrownApiError(() => validateBody(Body, { to: ['a', 'b', 'x'.repeat(255)] }));
    expect(e.status).to.equal(400);
    expect(e.code).to.equal('validation_error');
    expect(e.field).to.equal('to[2]');
    expect(e.message).to.equal('to[2]: must be at most 254 characters');
  });

  it('name nested fields like attachments[0].filename', function () {
    const e = thrownApiError(() => validateBody(Body, { to: [], attachments: [{ filename: '' }] }));
    expect(e.field).to.equal('attachments[0].filename');
    expect(e.message).to.equal('attachments[0].filename: must not be empty');
  });

  it('name an unknown field', function () {
    expect(thrownApiError(() => validateBody(Body, { to: [], colour: 'blue' })).field).to.equal('colour');
    expect(
      thrownApiError(() => validateBody(Body, { to: [], attachments: [{ filename: 'a', size: 1 }] })).field,
    ).to.equal('attachments[0].size');
  });

  it('name a missing field', function () {
    const e = thrownApiError(() => validateBody(Body, {}));
    expect(e.field).to.equal('to');
    expect(e.message).to.equal('to: is required');
  });

  it('name the body when it is not an object', function () {
    expect(thrownApiError(() => validateBody(Body, [1])).field).to.equal('body');
  });

  it('coerce query strings to their types', function () {
    const Q = Type.Object(
      { limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }) },
      { additionalProperties: false },
    );
    expect(validateQuery(Q, { limit: '5' })).to.deep.equal({ limit: 5 });
    expect(validateQuery(Q, {})).to.deep.equal({ limit: 20 });
    expect(thrownApiError(() => validateQuery(Q, { limit: '101' })).message).to.equal('limit: must be <= 100');
  });

  it('turn JSON pointers into field paths', function () {
    expect(pointerToField('')).to.equal('');
    expect(pointerToField('/a/0/b/12')).to.equal('a[0].b[12]');
    expect(pointerToField('/headers', 'X-Thing')).to.equal('headers.X-Thing');
  });
});
