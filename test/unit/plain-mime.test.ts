import { expect } from 'chai';
import { simpleParser } from 'mailparser';
import { buildMime, mimeComposer, plainMime, writeTree, type MimeInput } from '../../src/mta/build-mime.js';

// The common message is written straight out (plainMime) instead of through nodemailer's composer:
// it must be the composer's message byte for byte, for every input it takes, and it must leave every
// other input to the composer.

let seed = 20261130;
const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)];
const word = (alphabet: string, min: number, max: number) =>
  Array.from({ length: min + Math.floor(next() * (max - min + 1)) }, () => pick([...alphabet])).join('');
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const ALNUM = `${LOWER}ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789`;

function address(): string {
  const bare = `${word(LOWER, 1, 8)}${pick(['', '.', '+', '_', '-'])}${word(ALNUM, 1, 6)}@${word(LOWER, 1, 8)}.${pick(['test', 'example', 'co.uk'])}`;
  if (next() < 0.5) return bare;
  return `${Array.from({ length: 1 + Math.floor(next() * 3) }, () => word(ALNUM, 1, 8)).join(' ')} <${bare}>`;
}

/** A body from pieces that move the composer's choices: 8-bit text, long lines, bare LF and CRLF, control characters. */
function body(): string {
  const pieces = [
    'Hello there, this is your receipt. ',
    'Grüße aus Köln, ',
    'Привет, как дела? Всё хорошо. ',
    '😀 ',
    '\n',
    '\r\n',
    '\r\n\r\n',
    '.\n',
    'From the team\n',
    'x'.repeat(70),
    'y'.repeat(90),
    '\t ',
    '  trailing  \n',
    '\u0001',
    '<p>a <b>bold</b> word</p>',
    '=3D and = signs',
  ];
  return Array.from({ length: 1 + Math.floor(next() * 12) }, () => pick(pieces)).join('');
}

function input(): MimeInput {
  const text = next() < 0.8 ? body() : null;
  const html = next() < 0.8 || text === null ? `<html><body>${body()}</body></html>` : null;
  return {
    from: address(),
    to: Array.from({ length: 1 + Math.floor(next() * 2) }, address),
    cc: next() < 0.2 ? [address()] : [],
    replyTo: next() < 0.2 ? [address()] : null,
    subject: Array.from({ length: 1 + Math.floor(next() * 6) }, () => word(`${ALNUM}!#%&*-:;?.,`, 1, 9)).join(' '),
    text,
    html,
    headers: {},
    attachments: [],
    messageId: `<${word(LOWER + '0123456789', 26, 26)}@mta.example.test>`,
    date: new Date(Math.floor(next() * 4e12)),
  };
}

const composed = (m: MimeInput, base: string) => writeTree(mimeComposer(m, base).compile())!;

describe('plainMime: the common message written straight out', function () {
  it("is the composer's message byte for byte, for 3,000 generated messages", function () {
    let written = 0;
    for (let i = 0; i < 3000; i++) {
      const m = input();
      const base = word('0123456789abcdef', 16, 16);
      const plain = plainMime(m, base);
      if (!plain) continue;
      written++;
      const expected = composed(m, base);
      if (!plain.equals(expected))
        expect(plain.toString('latin1'), JSON.stringify(m)).to.equal(expected.toString('latin1'));
    }
    // most of them are of the common kind (the others: a To or From line of 76 characters or more, which the composer folds)
    expect(written).to.be.above(2000);
  });

  it('leaves everything else to the composer', function () {
    const m = { ...input(), text: 'Hello', html: null };
    expect(plainMime(m, 'abcdef0123456789')).to.not.equal(null);
    const others: Array<Partial<MimeInput>> = [
      { subject: 'Grüße' },
      { subject: 'two  spaces' },
      { subject: '=?utf-8?q?x?=' },
      { subject: '' },
      { from: 'Ann, Inc. <ann@example.test>' },
      { from: 'Jörg <joerg@example.test>' },
      { to: ['bob@xn--bcher-kva.de', 'user@bücher.de'] },
      { to: [] },
      { to: Array.from({ length: 4 }, (_, i) => `someone.long${i}@example.test`) },
      { headers: { 'X-Campaign': 'spring' } },
      { attachments: [{ filename: 'a.txt', content: Buffer.from('a') }] },
      { reportType: 'tlsrpt' },
      { text: '', html: '<p>x</p>' },
      { text: null, html: null },
    ];
    for (const o of others) expect(plainMime({ ...m, ...o }, 'abcdef0123456789'), JSON.stringify(o)).to.equal(null);
  });

  it('reads back as the message it was asked for', async function () {
    const m: MimeInput = {
      ...input(),
      from: 'Shop <orders@shop.example.test>',
      to: ['ann@example.test'],
      subject: 'Your order 123',
      text: 'Grüße!\nLine two\n',
      html: '<p>Grüße!</p>',
    };
    const parsed = await simpleParser(await buildMime(m));
    expect(parsed.subject).to.equal('Your order 123');
    expect(parsed.text).to.equal('Grüße!\nLine two\n');
    expect(parsed.html).to.equal('<p>Grüße!</p>');
    expect(parsed.from?.value[0]).to.deep.include({ name: 'Shop', address: 'orders@shop.example.test' });
  });
});
