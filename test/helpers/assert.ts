import { expect } from 'chai';
import type { Reply } from './http.js';
import { ApiError } from '../../src/lib/errors.js';

/** The CONTRACT §4 error body, with the Request-Id header equal to request_id. */
export function expectError(
  res: Reply,
  status: number,
  code: string,
  field?: string,
): { code: string; message: string; field?: string } {
  expect(res.status, `status of ${res.text}`).to.equal(status);
  expect(res.body?.error?.code, res.text).to.equal(code);
  expect(res.body.error.message).to.be.a('string').and.not.equal('');
  expect(res.body.request_id).to.match(/^req_[0-9a-z]{26}$/);
  expect(res.headers.get('request-id')).to.equal(res.body.request_id);
  // CONTRACT §4: `field` is present for validation errors only
  if (code !== 'validation_error' && code !== 'invalid_variables')
    expect(res.body.error, res.text).to.not.have.property('field');
  if (field !== undefined) {
    expect(res.body.error.field, res.text).to.equal(field);
    expect(res.body.error.message.startsWith(`${field}:`), res.body.error.message).to.equal(true);
  }
  return res.body.error;
}

/** The ApiError `fn` throws (a service's refusal, tested without HTTP); fails when it throws nothing or something else. */
export function thrownApiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    expect(e).to.be.instanceOf(ApiError);
    return e as ApiError;
  }
  throw new Error('nothing was thrown');
}
