import { expect } from 'chai';
import { simpleParser } from 'mailparser';
import { AS_WRITTEN, readOnePart } from '../../src/modules/sending/emails/read-message.js';

// readOnePart reads the common submitted message without simpleParser's streams: wherever it
// answers, its answer must be simpleParser's, field by field; wherever it cannot, it gives null.
const msg = (headers: string[], body: string) => Buffer.from([...headers, '', body].join('\r\n'), 'utf8');
const base = [
  'From: Shop <orders@shop.test>',
  'To: ann@example.com',
  'Subject: Order 1',
  'Message-ID: <m1@client.test>',
];

const READ: Record<string, Buffer> = {
  'plain, no MIME headers': msg(base, 'Hello\r\nthere\r\n'),
  'text/plain utf-8 8bit with non-ASCII text': msg(
    [...base, 'MIME-Version: 1.0', 'Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: 8bit'],
    'Grüße, 東京 ✓\r\n',
  ),
  'quoted charset, upper case type and encoding': msg(
    [...base, 'Content-Type: TEXT/PLAIN; charset="UTF-8"', 'Content-Transfer-Encoding: 7BIT'],
    'x\r\n',
  ),
  'us-ascii text': msg([...base, 'Content-Type: text/plain; charset=us-ascii'], 'ascii only\r\n'),
  'text/html only': msg([...base, 'Content-Type: text/html; charset=utf-8'], '<p>Hi <b>Ann</b></p>\r\n'),
  'names with quotes, commas and groups; several To and Cc': msg(
    [
      'From: "Doe, John" <john@shop.test>',
      'To: ann@example.com, "B \\"the\\" Bee" <bee@example.com>',
      'Cc: team: a@example.com, b@example.com;',
      'To: late@example.com',
      'Reply-To: help@shop.test',
      'Subject: Hi',
      'Message-ID: m2@client.test',
    ],
    'body',
  ),
  'folded headers and custom headers': msg(
    [
      ...base.slice(0, 2),
      'Subject: a long subject',
      '  folded onto a second line',
      'X-Campaign: spring',
      'X-Long: one',
      '\ttwo',
      'List-Unsubscribe: <mailto:u@shop.test>',
    ],
    'b\r\n',
  ),
  'an IDN address in punycode': msg(['From: a@xn--mnchen-3ya.de', 'To: b@example.com', 'Subject: s'], 'b'),
  'no Subject, no Message-ID, bare LF lines in the body': msg(
    ['From: a@shop.test', 'To: b@example.com'],
    'one\ntwo\r\nthree',
  ),
  'empty body': msg(base, ''),
  'empty HTML body': msg([...base, 'Content-Type: text/html'], ''),
  'duplicate Subject and From (the first is kept)': msg(
    ['From: a@shop.test', 'From: z@shop.test', 'To: b@example.com', 'Subject: first', 'Subject: second'],
    'b',
  ),
};

const NOT_READ: Record<string, Buffer> = {
  multipart: msg(
    [...base, 'Content-Type: multipart/alternative; boundary=b'],
    '--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--\r\n',
  ),
  base64: msg(
    [...base, 'Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: base64'],
    'SGVsbG8=\r\n',
  ),
  'quoted-printable': msg(
    [...base, 'Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: quoted-printable'],
    'caf=C3=A9\r\n',
  ),
  'an encoded word': msg(['From: =?utf-8?q?J=C3=B6rg?= <j@shop.test>', 'To: b@example.com', 'Subject: s'], 'b'),
  'raw UTF-8 in a header': Buffer.from('From: Jörg <j@shop.test>\r\nTo: b@example.com\r\nSubject: s\r\n\r\nb', 'utf8'),
  'latin1 text': Buffer.concat([
    msg([...base, 'Content-Type: text/plain; charset=iso-8859-1', 'Content-Transfer-Encoding: 8bit'], ''),
    Buffer.from([0x63, 0x61, 0x66, 0xe9]),
  ]),
  '8-bit text with no charset': Buffer.concat([msg(base, ''), Buffer.from([0xe9])]),
  'format=flowed': msg([...base, 'Content-Type: text/plain; charset=utf-8; format=flowed'], 'soft \r\nbreak\r\n'),
  'an attachment disposition': msg(
    [...base, 'Content-Type: text/plain', 'Content-Disposition: attachment; filename=a.txt'],
    'x',
  ),
  'another type': msg([...base, 'Content-Type: application/pdf'], 'x'),
  'an mbox From line first': Buffer.from(`From sender@x Mon Jan  1 00:00:00 2026\r\n${msg(base, 'b').toString()}`),
  'no blank line after the headers': Buffer.from(base.join('\r\n')),
};

describe('readOnePart: simpleParser’s reading without its streams', function () {
  for (const [name, raw] of Object.entries(READ)) {
    it(`reads ${name} as simpleParser does`, async function () {
      const fast = readOnePart(raw);
      expect(fast, 'read').to.not.equal(null);
      const slow = await simpleParser(raw, AS_WRITTEN);
      for (const field of [
        'from',
        'to',
        'cc',
        'replyTo',
        'subject',
        'messageId',
        'text',
        'html',
        'headerLines',
      ] as const) {
        expect(fast![field], field).to.deep.equal(slow[field]);
      }
      expect(fast!.attachments).to.deep.equal([]);
      expect(slow.attachments).to.deep.equal([]);
    });
  }
  for (const [name, raw] of Object.entries(NOT_READ)) {
    it(`leaves ${name} to simpleParser`, function () {
      expect(readOnePart(raw)).to.equal(null);
    });
  }
});
