import { expect } from 'chai';
import { simpleParser } from 'mailparser';
import { buildMime, mimeComposer, writeTree, type MimeInput } from '../../src/mta/build-mime.js';

const plain: MimeInput = {
  from: 'Shop <orders@shop.example.test>',
  to: ['ann@example.test'],
  cc: [],
  replyTo: null,
  subject: 'Your order',
  html: null,
  text: 'Thanks for your order.\r\n',
  headers: {},
  attachments: [],
  messageId: '<m1@mta.example.test>',
  date: new Date('2026-11-24T08:00:00Z'),
};

/** A small seeded generator, so that a failing case can be found again. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const PIECES = [
  'Hello',
  ' ',
  '  ',
  '\t',
  'Grüße',
  '日本語のテキスト',
  '😀',
  '=',
  '.',
  '\r\n',
  '\n',
  '\r',
  'x'.repeat(90),
  '<p>',
  '</p>',
  'naïve café',
  'a=b; c',
  '\r\n.\r\n',
  ' \r\n',
  '\u0000',
  'Ωμέγα',
];

function text(r: () => number, max: number): string {
  let out = '';
  const n = Math.floor(r() * max);
  for (let i = 0; i < n; i++) out += PIECES[Math.floor(r() * PIECES.length)];
  return out;
}

function bytes(r: () => number, max: number): Buffer {
  const b = Buffer.alloc(Math.floor(r() * max));
  for (let i = 0; i < b.length; i++) b[i] = Math.floor(r() * 256);
  return b;
}

function randomMessage(r: () => number, i: number): MimeInput {
  const pick = r();
  const attachments: MimeInput['attachments'] = [];
  const count = Math.floor(r() * 3);
  for (let a = 0; a < count; a++) {
    attachments.push({
      filename: r() < 0.5 ? `file-${a}.bin` : `résumé ${a}.pdf`,
      content: r() < 0.3 ? Buffer.from(text(r, 40)) : bytes(r, r() < 0.2 ? 70_000 : 300),
      ...(r() < 0.5 ? { contentType: r() < 0.5 ? 'application/pdf' : 'text/plain' } : {}),
      ...(r() < 0.3 ? { contentId: `cid${a}@example.test` } : {}),
    });
  }
  return {
    ...plain,
    from: r() < 0.5 ? 'Jörg Shop <orders@xn--bcher-kva.example>' : plain.from,
    to: r() < 0.3 ? ['a@example.test', '"Doe, Jane" <jane@example.test>'] : ['ann@example.test'],
    cc: r() < 0.3 ? ['carol@example.test'] : [],
    replyTo: r() < 0.3 ? ['replies@example.test'] : null,
    subject: text(r, 12) || 'x',
    text: pick < 0.33 ? null : text(r, r() < 0.1 ? 2000 : 60),
    html: pick > 0.66 ? null : `<p>${text(r, r() < 0.1 ? 2000 : 60)}</p>`,
    headers: r() < 0.3 ? { 'X-Campaign': text(r, 4) || 'c', 'List-Unsubscribe': '<mailto:u@example.test>' } : {},
    attachments,
    messageId: `<m${i}@mta.example.test>`,
  };
}

describe('buildMime: the composer tree written in one pass', function () {
  it("writes exactly the bytes of the composer's own stream, for 400 varied messages", async function () {
    const r = rng(20261124);
    for (let i = 0; i < 400; i++) {
      const m = randomMessage(r, i);
      const composer = mimeComposer(m);
      const written = writeTree(composer.compile());
      const streamed = await composer.compile().build();
      expect(written, `message ${i} was not written in one pass`).to.not.equal(null);
      expect(
        written!.equals(streamed),
        `message ${i} differs: ${JSON.stringify({ ...m, attachments: m.attachments.length })}`,
      ).to.equal(true);
    }
  });

  it('covers the shapes that matter: 7bit, quoted-printable, base64, alternatives, related and mixed parts', async function () {
    const shapes: MimeInput[] = [
      plain,
      { ...plain, text: 'line without an ending' },
      { ...plain, text: 'ends in a carriage return\r' },
      { ...plain, text: `${'long '.repeat(40)}\r\n` },
      { ...plain, text: 'Grüße aus Köln\r\n' },
      { ...plain, text: '日本語のテキストです。'.repeat(20) },
      { ...plain, text: '' },
      {
        ...plain,
        html: '<p>Hi <img src="cid:logo"></p>',
        attachments: [
          {
            filename: 'logo.png',
            content: Buffer.from([0x89, 0x50, 0x4e, 0x47]),
            contentType: 'image/png',
            contentId: 'logo',
          },
        ],
      },
      {
        ...plain,
        html: '<p>Hi</p>',
        attachments: [
          { filename: 'a.pdf', content: Buffer.alloc(0) },
          { filename: 'b.txt', content: Buffer.from('one\r\ntwo') },
        ],
      },
    ];
    const seen = new Set<string>();
    for (const m of shapes) {
      const composer = mimeComposer(m);
      const written = writeTree(composer.compile())!;
      expect(written.equals(await composer.compile().build())).to.equal(true);
      for (const t of written
        .toString('latin1')
        .matchAll(/Content-Transfer-Encoding: (\S+)|Content-Type: (multipart\/\w+)/g))
        seen.add(t[1] ?? t[2]);
    }
    expect([...seen].sort()).to.deep.equal([
      '7bit',
      'base64',
      'multipart/alternative',
      'multipart/mixed',
      'multipart/related',
      'quoted-printable',
    ]);
  });

  it('ends every line in CRLF, so that the SMTP client changes no byte the DKIM body hash covers', async function () {
    for (const text of ['one\ntwo\n\nthree', 'cr\ronly', 'mixed\r\nand\nbare\r']) {
      const raw = (await buildMime({ ...plain, text, html: '<p>a\nb</p>' })).toString('latin1');
      expect(raw, JSON.stringify(text)).to.not.match(/\r(?!\n)|(?<!\r)\n/);
      expect((await simpleParser(raw)).text).to.equal(text.replace(/\r\n|\r|\n/g, '\n'));
    }
  });

  it('gives each message boundaries of its own', async function () {
    const a = (await buildMime({ ...plain, html: '<p>a</p>' })).toString();
    const b = (await buildMime({ ...plain, html: '<p>a</p>' })).toString();
    const boundary = (s: string) => /boundary="([^"]+)"/.exec(s)![1];
    expect(boundary(a)).to.not.equal(boundary(b));
    const parsed = await simpleParser(a);
    expect(parsed.text).to.equal('Thanks for your order.\n');
    expect(parsed.html).to.equal('<p>a</p>');
  });
});

describe('a TLS report as mail (RFC 8460 §5.3)', function () {
  it('is a multipart/report of report-type tlsrpt: the text first, then the gzipped report', async function () {
    const report = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3]);
    const m: MimeInput = {
      ...plain,
      text: 'This is an aggregate SMTP TLS report.',
      attachments: [
        { filename: 'mta!example.test!1!2.json.gz', content: report, contentType: 'application/tlsrpt+gzip' },
      ],
      reportType: 'tlsrpt',
    };
    const raw = await buildMime(m);
    const head = raw.toString('latin1').split('\r\n\r\n')[0];
    expect(head).to.match(/^Content-Type: multipart\/report; report-type=("?)tlsrpt\1;\s+boundary="[^"]+"/m);
    const parsed = await simpleParser(raw);
    expect(parsed.text).to.equal('This is an aggregate SMTP TLS report.');
    expect(parsed.attachments.map((a) => [a.contentType, a.content.equals(report)])).to.deep.equal([
      ['application/tlsrpt+gzip', true],
    ]);
    // the same message otherwise: multipart/mixed
    const mixed = (await buildMime({ ...m, reportType: null })).toString('latin1');
    expect(mixed).to.match(/^Content-Type: multipart\/mixed;/m);
  });
});
