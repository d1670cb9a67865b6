import { expect } from 'chai';
import { readableHere, readInbound } from '../../src/modules/receiving/inbound/read-inbound.js';
import { submittedEmail, submittedEmailHere } from '../../src/modules/sending/emails/submitted.js';
import { deliveryStatus } from '../fixtures/report-builders.js';

// What the SMTP listeners read on their own thread instead of the parsing pool
// (docs/security.md): only small inputs of the common form, whose reading is
// bounded to a few hundred microseconds; the answer is the same either way.

const report = { report: true, received: false, dmarc: false };
const dsn = deliveryStatus({
  to: 'bounce+x@mx.test',
  recipient: 'ann@example.com',
  status: '5.1.1',
  diagnostic: 'smtp; 550 5.1.1 no such user',
  original: 'From: a@shop.test\r\nTo: ann@example.com\r\nSubject: Hi\r\n\r\nhello\r\n',
});

describe('reading on the listener thread (small and plain) or on the parsing pool', function () {
  context('a bounce for the MX listener', function () {
    it('reads a plain DSN of a few KB here, and reads it as the pool would', async function () {
      expect(readableHere(Buffer.from(dsn), report)).to.equal(true);
      const here = await readInbound({ raw: Buffer.from(dsn), needs: report });
      expect(here.report!.kind).to.equal('bounce');
    });

    it('sends to the pool what is large, long, many-parted, encoded, or read by mailparser', function () {
      expect(readableHere(Buffer.from(dsn + 'x'.repeat(5000)), report), 'over 4 KB').to.equal(false);
      expect(readableHere(Buffer.from('a\r\n'.repeat(101)), report), '101 lines').to.equal(false);
      expect(
        readableHere(
          Buffer.from('Content-Type: multipart/mixed; boundary="z"\r\n\r\n' + '--z\r\n\r\n'.repeat(9)),
          report,
        ),
        '9 boundaries',
      ).to.equal(false);
      expect(readableHere(Buffer.from('Subject: =?UTF-8?B?YWJj?=\r\n\r\nx'), report), 'an encoded word').to.equal(
        false,
      );
      expect(
        readableHere(Buffer.from('Content-Transfer-Encoding: Quoted-Printable\r\n\r\n=41'), report),
        'quoted-printable',
      ).to.equal(false);
      expect(readableHere(Buffer.from(dsn), { report: false, received: true, dmarc: false }), 'received mail').to.equal(
        false,
      );
      expect(
        readableHere(Buffer.from(dsn), { report: false, received: false, dmarc: true }),
        'a DMARC report',
      ).to.equal(false);
    });
  });

  context('a message submitted over SMTP', function () {
    const envelope = { from: 'hello@shop.test', to: ['ann@example.com'] };
    const plain =
      'From: Shop <hello@shop.test>\r\nTo: ann@example.com\r\nSubject: Order 1\r\nMessage-ID: <o1@shop.test>\r\n\r\nThanks!\r\n';

    it('reads the common one-part message here, the same as the full reader', async function () {
      const here = submittedEmailHere(Buffer.from(plain), envelope);
      expect(here).to.deep.equal(await submittedEmail(Buffer.from(plain), envelope));
      expect(here!.body).to.include({ subject: 'Order 1', text: 'Thanks!\n' });
    });

    it('leaves to the pool a message over 4 KB, with many header lines or addresses, or not of the common form', function () {
      expect(submittedEmailHere(Buffer.from(plain + 'x'.repeat(5000)), envelope), 'over 4 KB').to.equal(null);
      expect(
        submittedEmailHere(Buffer.from('X-A: b\r\n'.repeat(41) + plain), envelope),
        '41 more header lines',
      ).to.equal(null);
      const many = `From: hello@shop.test\r\nTo: ${Array.from({ length: 20 }, (_, i) => `u${i}@x.test`).join(', ')}\r\nSubject: s\r\n\r\nb`;
      expect(submittedEmailHere(Buffer.from(many), envelope), '21 addresses').to.equal(null);
      expect(
        submittedEmailHere(Buffer.from('From: a@b.c\r\nSubject: =?UTF-8?B?w6k=?=\r\n\r\nb'), envelope),
        'an encoded word',
      ).to.equal(null);
    });
  });
});
