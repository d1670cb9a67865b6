import { expect } from 'chai';
import { ApiError } from '../../src/lib/errors.js';
import { KeysInFlight } from '../../src/modules/sending/emails/idempotency.js';
import { resendError } from '../../src/modules/compat/resend/resend-errors.js';
import { thrownApiError } from '../helpers/assert.js';

describe('Resend errors: an Idempotency-Key still being answered, and one reused with another body', function () {
  it('are both 409 idempotency_conflict in /v1, told apart only by their detail', function () {
    const keys = new KeysInFlight();
    keys.enter('prj_1', 'welcome-1', 'hash-a');
    const again = thrownApiError(() => keys.enter('prj_1', 'welcome-1', 'hash-a'));
    expect(again).to.be.instanceOf(ApiError);
    expect(again).to.deep.include({ status: 409, code: 'idempotency_conflict', detail: 'in_flight' });
    expect(again.message).to.equal('a request with this Idempotency-Key is still being processed');
    const other = thrownApiError(() => keys.enter('prj_1', 'welcome-1', 'hash-b'));
    expect(other).to.deep.include({ status: 409, code: 'idempotency_conflict', detail: undefined });
    // another project's request with the same key is no conflict
    expect(() => keys.enter('prj_2', 'welcome-1', 'hash-a')).to.not.throw();
  });

  it("answer Resend's two names at /resend: concurrent_idempotent_requests and invalid_idempotent_request", function () {
    const keys = new KeysInFlight();
    keys.enter('prj_1', 'k', 'h');
    expect(
      resendError(
        thrownApiError(() => keys.enter('prj_1', 'k', 'h')),
        true,
      ),
    ).to.deep.equal({
      status: 409,
      body: {
        statusCode: 409,
        name: 'concurrent_idempotent_requests',
        message: 'a request with this Idempotency-Key is still being processed',
      },
    });
    expect(
      resendError(
        thrownApiError(() => keys.enter('prj_1', 'k', 'other')),
        true,
      ).body,
    ).to.deep.include({
      statusCode: 409,
      name: 'invalid_idempotent_request',
    });
  });
});
