import { expect } from 'chai';
import { classifyNoReply, classifyReply } from '../../src/mta/classify-reply.js';

describe('SMTP reply classification (the delivery path)', function () {
  const table: Array<[number, string, string, string?, string?]> = [
    [250, '250 2.0.0 Ok: queued as 4FhX1', 'delivered'],
    [251, '251 User not local; will forward', 'delivered'],
    [421, '421 4.7.0 Try again later', 'deferred'],
    [450, '450 4.2.1 Mailbox busy', 'deferred'],
    [451, '451 4.2.0 Temporary failure', 'deferred'],
    [452, '452 4.5.3 Too many recipients', 'deferred'],
    [550, '550 5.1.1 User unknown', 'bounced', 'Permanent', 'user_unknown'],
    [551, '551 5.1.6 User not local; please try <b@elsewhere.test>', 'bounced', 'Permanent', 'has_moved'],
    [552, '552 5.3.4 Message too big', 'bounced', 'Transient', 'exceed_limit'],
    [554, '554 5.7.1 Rejected as spam', 'bounced', 'Transient', 'spam_detected'],
    [550, '550 5.7.1 your IP is blocked', 'bounced', 'Transient', 'blocked'],
    [550, '550 4.2.2 Mailbox full, try later', 'deferred'],
    [999, '999 what', 'deferred'],
  ];
  for (const [code, text, kind, bounceType, reason] of table) {
    it(`${text} → ${kind}${bounceType ? ` ${bounceType} ${reason}` : ''}`, function () {
      const c = classifyReply(code, text);
      expect(c.kind).to.equal(kind);
      expect(c.bounce?.bounceType).to.equal(
        kind === 'bounced' ? bounceType : kind === 'deferred' && code < 999 ? 'Transient' : undefined,
      );
      if (reason) expect(c.bounce?.reason).to.equal(reason);
      expect(c.reply).to.include(String(code));
    });
  }

  it('"user unknown" without an addressing status is the directory\'s only as a reply to RCPT TO', function () {
    const reply = '550 No such user here';
    expect(classifyReply(550, reply, 'RCPT TO').bounce).to.include({ bounceType: 'Permanent', reason: 'user_unknown' });
    // after DATA the same words are a filter's (au, docomo answer so): the address stays
    expect(classifyReply(550, reply, 'DATA').bounce).to.include({ bounceType: 'Transient', reason: 'filtered' });
    // not knowing when, a relayed reply stays soft
    expect(classifyReply(550, reply).bounce).to.include({ bounceType: 'Transient', reason: 'filtered' });
    // a refusal of MAIL FROM is about the sender
    expect(classifyReply(550, reply, 'MAIL FROM').bounce).to.include({ bounceType: 'Transient', reason: 'rejected' });
    // an addressing status says it whenever it came
    expect(classifyReply(550, '550 5.1.1 No such user here').bounce).to.include({ bounceType: 'Permanent' });
  });

  it('a lost connection before the body is a deferral, after it is ambiguous', function () {
    expect(classifyNoReply('connection refused', false).kind).to.equal('deferred');
    expect(classifyNoReply('connection closed', true).kind).to.equal('ambiguous');
  });
});
