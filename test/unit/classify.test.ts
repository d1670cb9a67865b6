import { expect } from 'chai';
import { classifyNoReply, classifyReply } from '../../src/mta/classify.js';

describe('SMTP reply classification', function () {
  const table: Array<[number, string, string, string?]> = [
    [250, '250 2.0.0 Ok: queued as 4FhX1', 'delivered'],
    [251, '251 User not local; will forward', 'delivered'],
    [421, '421 4.7.0 Try again later', 'deferred'],
    [450, '450 4.2.1 Mailbox busy', 'deferred'],
    [451, '451 4.2.0 Temporary failure', 'deferred'],
    [452, '452 4.5.3 Too many recipients', 'deferred'],
    [550, '550 5.1.1 User unknown', 'bounced', 'Permanent'],
    [551, '551 User not local', 'bounced', 'Permanent'],
    [552, '552 5.3.4 Message too big', 'bounced', 'Permanent'],
    [554, '554 5.7.1 Rejected as spam', 'bounced', 'Permanent'],
    [550, '550 4.2.2 Mailbox full, try later', 'deferred'],
    [999, '999 what', 'deferred'],
  ];
  for (const [code, text, kind, bounceType] of table) {
    it(`${text} → ${kind}${bounceType ? ` ${bounceType}` : ''}`, function () {
      const c = classifyReply(code, text);
      expect(c.kind).to.equal(kind);
      expect(c.bounceType).to.equal(bounceType);
      expect(c.reply).to.include(String(code));
    });
  }

  it('a lost connection before the body is a deferral, after it is ambiguous', function () {
    expect(classifyNoReply('connection refused', false).kind).to.equal('deferred');
    expect(classifyNoReply('connection closed', true).kind).to.equal('ambiguous');
  });
});
