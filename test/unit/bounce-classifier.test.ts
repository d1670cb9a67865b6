import { expect } from 'chai';
import { classifyReply } from '../../src/mta/classify-reply.js';
import { SMTP_REPLIES } from '../fixtures/smtp-replies.js';

// The delivery path's half of the one classifier (modules/receiving/bounces/classify-bounce.ts): replies real
// providers document, with the verdict docs/bounces.md gives for each.
describe('bounce classifier: documented SMTP replies of real providers', function () {
  const verdict = (code: number, text: string, command?: 'RCPT') => {
    const c = classifyReply(code, text, command);
    return {
      kind: c.kind,
      bounceType: c.kind === 'bounced' ? c.bounce!.bounceType : null,
      reason: c.bounce?.reason ?? null,
    };
  };
  let agreed = 0;
  after(function () {
    console.log(`      agreement with the table: ${agreed}/${SMTP_REPLIES.length}`);
  });
  for (const row of SMTP_REPLIES) {
    it(`${row.provider}: ${row.text.slice(0, 90)}${row.text.length > 90 ? '…' : ''} → ${row.bounceType ?? 'deferred'} ${row.reason}`, function () {
      const got = verdict(row.code, row.text, row.command);
      expect(got).to.deep.equal({
        kind: row.bounceType ? 'bounced' : 'deferred',
        bounceType: row.bounceType,
        reason: row.reason,
      });
      agreed++;
    });
  }
  it('covers at least 50 replies', function () {
    expect(SMTP_REPLIES.length).to.be.at.least(50);
  });
});
