import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { simpleParser } from 'mailparser';
import { authenticate } from 'mailauth';
import { buildMime } from '../../src/mta/build-mime.js';
import { createDkimSigner, relaxedBody } from '../../src/mta/dkim.js';
import { startSigningThread } from '../../src/mta/signing-pool.js';
import { createLogger, silentLogger } from '../../src/log/logger.js';
import { startDnsWorld, type DnsWorld } from '../helpers/dns-world.js';
import { createResolver } from '../../src/dns/resolver.js';

const base = {
  from: 'Ann Example <ann@example.test>',
  to: ['bob@example.test', 'Jörg <joerg@xn--bcher-kva.de>'],
  cc: ['carol@example.test'],
  replyTo: ['replies@example.test'],
  subject: 'Grüße — your receipt',
  html: '<p>Hello <img src="cid:logo"></p>',
  text: 'Hello   \r\nthere\t \r\n\r\n\r\n',
  headers: { 'X-Campaign': 'spring', 'List-Unsubscribe': '<mailto:unsub@example.test>' },
  attachments: [
    {
      filename: 'logo.png',
      content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]),
      contentType: 'image/png',
      contentId: 'logo',
    },
    { filename: 'receipt.pdf', content: Buffer.from('%PDF-1.7 fake'), contentType: 'application/pdf' },
  ],
  messageId: '<abc123@mta.example.test>',
  date: new Date('2026-11-22T10:00:00Z'),
};

describe('buildMime', function () {
  it('builds the message with alternatives, inline and attached files, and no Bcc', async function () {
    const raw = await buildMime(base);
    expect(raw.toString('binary')).to.not.match(/^bcc:/im);
    expect(
      raw
        .toString('binary')
        .split('\r\n')
        .every((l) => l.length <= 998),
    ).to.equal(true);
    const m = await simpleParser(raw);
    expect(m.subject).to.equal(base.subject);
    expect(m.from?.value[0]).to.deep.include({ address: 'ann@example.test', name: 'Ann Example' });
    // mailparser shows the IDN in its Unicode form
    expect((m.to as { value: Array<{ address: string }> }).value.map((v) => v.address)).to.deep.equal([
      'bob@example.test',
      'joerg@bücher.de',
    ]);
    expect((m.cc as { value: Array<{ address: string }> }).value[0].address).to.equal('carol@example.test');
    expect(m.messageId).to.equal(base.messageId);
    expect(m.date?.toISOString()).to.equal(base.date.toISOString());
    expect(m.text).to.include('Hello');
    expect(m.html).to.include('Hello');
    expect(m.headers.get('x-campaign')).to.equal('spring');
    expect(raw.toString()).to.include('List-Unsubscribe: <mailto:unsub@example.test>');
    const logo = m.attachments.find((a) => a.filename === 'logo.png')!;
    expect(logo.cid).to.equal('logo');
    expect(logo.content.equals(base.attachments[0].content)).to.equal(true);
    expect(m.attachments.find((a) => a.filename === 'receipt.pdf')!.content.toString()).to.equal('%PDF-1.7 fake');
  });
});

describe('DKIM signing (RFC 6376, relaxed/relaxed)', function () {
  let world: DnsWorld;
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  /** the signing thread's DKIM input for sel1._domainkey.example.test */
  const dkim = {
    domainName: 'example.test',
    selector: 'sel1',
    keyId: 'k1',
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
  before(async function () {
    world = await startDnsWorld();
    world.add('sel1._domainkey.example.test', 'TXT', `v=DKIM1; k=rsa; p=${p}`);
  });
  after(async () => world.stop());

  async function verify(raw: Buffer) {
    return (await dkimOf(raw)).map(
      (x: { status?: { result?: string }; signingDomain?: string }) => `${x.signingDomain}:${x.status?.result}`,
    );
  }

  /** mailauth's DKIM results, resolving the public key through the world DNS */
  async function dkimOf(raw: Buffer) {
    const r = createResolver({ servers: [world.address] });
    const res = await authenticate(raw, {
      ip: '127.0.0.1',
      helo: 'mta.example.test',
      mta: 'mx.example.test',
      disableArc: true,
      disableBimi: true,
      disableDmarc: true,
      resolver: async (name: string, type: string) =>
        type === 'TXT' ? r.resolveTxt(name) : type === 'MX' ? r.resolveMx(name) : r.resolve4(name),
    } as Parameters<typeof authenticate>[1]);
    return res.dkim?.results ?? [];
  }

  const signer = createDkimSigner({ domainName: 'example.test', selector: 'sel1', privateKey });

  it('produces a signature an independent verifier (mailauth) accepts', async function () {
    const signed = await signer(await buildMime(base));
    expect(signed.toString('binary').replace(/\r\n\t/g, ' ')).to.match(
      /^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=example\.test; s=sel1;/,
    );
    expect(await verify(signed)).to.deep.equal(['example.test:pass']);
  });

  it('fails when the body or the Subject changes after signing', async function () {
    const signed = (await signer(await buildMime({ ...base, attachments: [] }))).toString('binary');
    // a changed body fails the body hash (mailauth reports it as neutral, RFC 6376 §6.1.3), never pass
    expect((await verify(Buffer.from(signed.replace('Hello', 'Hullo'), 'binary')))[0]).to.be.oneOf([
      'example.test:neutral',
      'example.test:fail',
    ]);
    expect(await verify(Buffer.from(signed.replace(/^Subject: .*$/m, 'Subject: changed'), 'binary'))).to.deep.equal([
      'example.test:fail',
    ]);
  });

  /** the message with one top-level header field (and its folded lines) given another value */
  const withHeader = (signed: string, name: string, value: string) => {
    const end = signed.indexOf('\r\n\r\n');
    const head = signed
      .slice(0, end)
      .replace(new RegExp(`(^|\r\n)${name}:[^\r]*(\r\n[ \t][^\r]*)*`), `$1${name}: ${value}`);
    expect(head, `a ${name} header to change`).to.not.equal(signed.slice(0, end));
    return Buffer.from(head + signed.slice(end), 'binary');
  };

  it('covers From, To, Cc, Subject, Date and Message-ID (h=), as a verifier reads it', async function () {
    const [result] = await dkimOf(await signer(await buildMime({ ...base, attachments: [] })));
    expect(result?.status?.result).to.equal('pass');
    // mailauth lists the header fields h= made it hash (its typings leave the field out)
    const { signingHeaders } = result as unknown as { signingHeaders: { keys: string } };
    const covered = signingHeaders.keys.split(/:\s*/).map((k) => k.toLowerCase());
    expect(covered).to.include.members(['from', 'to', 'cc', 'subject', 'date', 'message-id']);
  });

  for (const [name, value] of [
    ['To', 'mallory@evil.test'],
    ['Cc', 'mallory@evil.test'],
    ['Date', 'Mon, 23 Nov 2026 10:00:00 +0000'],
    ['Message-ID', '<replayed@evil.test>'],
  ] as const) {
    it(`fails when the ${name} changes after signing`, async function () {
      const signed = (await signer(await buildMime({ ...base, attachments: [] }))).toString('binary');
      expect(await verify(Buffer.from(signed, 'binary'))).to.deep.equal(['example.test:pass']);
      expect(await verify(withHeader(signed, name, value))).to.deep.equal(['example.test:fail']);
    });
  }

  it('fails when a second From is added (oversigned)', async function () {
    const signed = (await signer(await buildMime({ ...base, attachments: [] }))).toString('binary');
    expect(await verify(Buffer.from(`From: mallory@evil.test\r\n${signed}`, 'binary'))).to.deep.equal([
      'example.test:fail',
    ]);
  });

  it('survives whitespace changes relaxed canonicalization allows', async function () {
    const signed = (await signer(await buildMime({ ...base, attachments: [] }))).toString('binary');
    const reflowed = signed.replace(/^Subject: /m, 'Subject:   ').replace(/\r\n$/, '\r\n\r\n\r\n');
    expect(await verify(Buffer.from(reflowed, 'binary'))).to.deep.equal(['example.test:pass']);
  });

  it('on the signing thread: the same message, attachments and all, signed so that mailauth accepts it; if the thread fails, this thread signs', async function () {
    const logged: string[] = [];
    const signing = startSigningThread(createLogger('info', { write: (line: string) => void logged.push(line) }));
    try {
      const input = {
        mime: { ...base, date: base.date.getTime() },
        dkim,
      };
      const signed = await signing.sign(input);
      expect(Buffer.isBuffer(signed)).to.equal(true);
      expect(await verify(signed)).to.deep.equal(['example.test:pass']);
      const parsed = await simpleParser(signed);
      expect(
        parsed.attachments.find((a) => a.filename === 'logo.png')!.content.equals(base.attachments[0].content),
      ).to.equal(true);
      expect(parsed.subject).to.equal(base.subject);
      expect(parsed.messageId).to.equal(base.messageId);
      expect(parsed.date!.getTime()).to.equal(base.date.getTime());
      // signed over there, not by the fallback here
      expect(logged.join('')).not.to.include('the signing thread stopped');
      // input the thread chokes on: that message fails, the thread is gone, and the next is signed here
      const bad = await signing
        .sign({ ...input, mime: { ...input.mime, attachments: undefined as never } })
        .catch((e: unknown) => e);
      expect(bad).to.be.instanceOf(Error);
      expect(await verify(await signing.sign(input))).to.deep.equal(['example.test:pass']);
      expect(logged.join('')).to.include('the signing thread stopped');
    } finally {
      await signing.close();
    }
  });

  it('on the signing thread: messages asked for together (one claimed batch) each come back as their own, signed', async function () {
    const signing = startSigningThread(silentLogger());
    try {
      const ids = Array.from({ length: 12 }, (_, i) => `<batch${i}@mta.example.test>`);
      // asked for in one turn of the event loop: they cross to the thread together
      const signed = await Promise.all(
        ids.map((messageId, i) =>
          signing.sign({
            mime: { ...base, attachments: [], subject: `n${i}`, messageId, date: base.date.getTime() },
            dkim,
          }),
        ),
      );
      const parsed = await Promise.all(signed.map((raw) => simpleParser(raw)));
      expect(parsed.map((m) => m.messageId)).to.deep.equal(ids);
      expect(parsed.map((m) => m.subject)).to.deep.equal(ids.map((_, i) => `n${i}`));
      expect(await verify(signed[7])).to.deep.equal(['example.test:pass']);
      // a batch that cannot cross to the thread (here: a value structured cloning refuses) is built on this one
      const odd = {
        ...base,
        attachments: [],
        messageId: '<odd@mta.example.test>',
        date: base.date.getTime(),
        notCloneable: () => undefined,
      };
      const [a, b] = await Promise.all([
        signing.sign({ mime: odd, dkim }),
        signing.sign({
          mime: { ...base, attachments: [], messageId: '<even@mta.example.test>', date: base.date.getTime() },
          dkim,
        }),
      ]);
      expect((await simpleParser(a)).messageId).to.equal('<odd@mta.example.test>');
      expect((await simpleParser(b)).messageId).to.equal('<even@mta.example.test>');
      expect(await verify(a)).to.deep.equal(['example.test:pass']);
    } finally {
      await signing.close();
    }
  });
  it('on several signing threads: a thread that dies hands its messages to this one, the others go on, and this one signs once none is left', async function () {
    const logged: string[] = [];
    const signing = startSigningThread(createLogger('info', { write: (line: string) => void logged.push(line) }), 2);
    try {
      const good = (n: number) =>
        signing.sign({
          mime: { ...base, attachments: [], messageId: `<t${n}@mta.example.test>`, date: base.date.getTime() },
          dkim,
        });
      const poison = () =>
        signing.sign({ mime: { ...base, attachments: undefined as never, date: base.date.getTime() }, dkim });
      // twenty at once are spread over both threads, and each comes back signed as itself
      const first = await Promise.all(Array.from({ length: 20 }, (_, n) => good(n)));
      expect((await simpleParser(first[13])).messageId).to.equal('<t13@mta.example.test>');
      expect(await verify(first[13])).to.deep.equal(['example.test:pass']);
      expect(await poison().catch((e: unknown) => e)).to.be.instanceOf(Error);
      expect(logged.join('')).to.include('the signing thread stopped; 1 other signing thread(s) go on');
      expect(await verify(await good(21))).to.deep.equal(['example.test:pass']);
      expect(await poison().catch((e: unknown) => e)).to.be.instanceOf(Error);
      expect(logged.join('')).to.include('the signing thread stopped; messages are signed on the MTA thread');
      expect(await verify(await good(22))).to.deep.equal(['example.test:pass']);
    } finally {
      await signing.close();
    }
  });
});

describe('relaxed body canonicalization (RFC 6376 §3.4.4)', function () {
  /** The RFC's rules as it states them, line by line, to hold the one-pass version to. */
  function byTheRules(body: Buffer): Buffer {
    const lines = body.toString('latin1').split('\r\n');
    const out = lines.map((l) => l.replace(/[ \t]+/g, ' ').replace(/ $/, ''));
    while (out.length && out[out.length - 1] === '') out.pop();
    return Buffer.from(out.length ? `${out.join('\r\n')}\r\n` : '', 'latin1');
  }

  it('gives what the rules give, for the RFC example and for bodies of WSP, CR, LF and empty lines', function () {
    // RFC 6376 §3.4.5's example body: " C \r\nD \t E\r\n\r\n\r\n" → " C\r\nD E\r\n"
    expect(relaxedBody(Buffer.from(' C \r\nD \t E\r\n\r\n\r\n')).toString('latin1')).to.equal(' C\r\nD E\r\n');
    expect(relaxedBody(Buffer.alloc(0)).length).to.equal(0);
    expect(relaxedBody(Buffer.from('\r\n \t\r\n')).length).to.equal(0);
    expect(relaxedBody(Buffer.from('no line end  ')).toString('latin1')).to.equal('no line end\r\n');
    const alphabet = [' ', '\t', '\r', '\n', '\r\n', '\r\n', 'a', 'é', '.', '\x00'];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let i = 0; i < 3000; i++) {
      const body = Buffer.from(
        Array.from({ length: Math.floor(next() * 40) }, () => alphabet[Math.floor(next() * alphabet.length)]).join(''),
        'latin1',
      );
      expect(relaxedBody(body).toString('latin1'), JSON.stringify(body.toString('latin1'))).to.equal(
        byTheRules(body).toString('latin1'),
      );
    }
  });
});
