import { expect } from 'chai';
import { ApiError, apiError, validationError } from '../../src/lib/errors.js';
import { replyOf } from '../../src/smtp/submission.js';

const reply = (e: unknown) => {
  const r = replyOf(e) as Error & { responseCode: number };
  return `${r.responseCode} ${r.message}`;
};

// What an SMTP client is told when the acceptance path refuses a submitted message (RFC 3463 codes)
describe('submission: API refusals as SMTP replies', function () {
  it('a refusal of the message is permanent (5xx) and keeps the API message', function () {
    expect(reply(apiError('domain_not_verified', 'the domain example.com is not verified'))).to.equal(
      '550 5.7.1 the domain example.com is not verified',
    );
    expect(reply(validationError('subject', 'is required'))).to.match(/^550 5\.6\.0 .*subject/);
    expect(reply(apiError('recipient_suppressed', 'a@b.test is suppressed'))).to.match(/^550 5\.7\.1 /);
  });

  it('attachments over the size limit are 552 5.3.4, like a message over SIZE', function () {
    expect(reply(validationError('attachments', 'at most 10 MB in all'))).to.match(/^552 5\.3\.4 /);
  });

  it('limits that pass with time are temporary (4xx): the client keeps the message and retries', function () {
    expect(reply(apiError('rate_limited', 'retry in 1 s'))).to.match(/^421 4\.7\.0 /);
    expect(reply(apiError('daily_limit_exceeded', 'the daily limit is reached'))).to.match(/^452 4\.7\.0 /);
    expect(reply(new Error('disk full'))).to.equal('451 4.3.0 temporary failure, try again later');
  });

  it('a reply never carries a line break from the message', function () {
    expect(reply(new ApiError(422, 'validation_error', 'bad\r\nRCPT TO:<x@y>', 'to'))).to.not.match(/[\r\n]/);
  });
});
