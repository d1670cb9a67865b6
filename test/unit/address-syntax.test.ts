import { expect } from 'chai';
import { readMailbox } from '../../src/modules/deliverability/verify/syntax.js';

// What readMailbox hands the rest of verification; test/unit/address-corpus.test.ts judges the syntax at large.
describe('readMailbox', function () {
  it('keeps the local part as written and lower-cases the domain', function () {
    expect(readMailbox('John.Doe+News@Example.COM')).to.deep.equal({
      ok: true,
      local: 'John.Doe+News',
      domain: 'example.com',
      smtputf8: false,
    });
  });

  it('keeps a quoted local part with its quotes and escapes', function () {
    expect(readMailbox('"john \\"jd\\" doe"@example.com')).to.deep.include({ ok: true, local: '"john \\"jd\\" doe"' });
  });

  it('gives an IDN domain in A-labels, needing SMTPUTF8 only for a UTF-8 local part', function () {
    expect(readMailbox('user@münchen.de')).to.deep.equal({
      ok: true,
      local: 'user',
      domain: 'xn--mnchen-3ya.de',
      smtputf8: false,
    });
    expect(readMailbox('δοκιμή@παράδειγμα.δοκιμή')).to.deep.equal({
      ok: true,
      local: 'δοκιμή',
      domain: 'xn--hxajbheg2az3al.xn--jxalpdlp',
      smtputf8: true,
    });
    expect(readMailbox('"λ"@example.com')).to.deep.include({ ok: true, smtputf8: true });
  });

  it('normalises a decomposed IDN domain to NFC before punycode', function () {
    expect(readMailbox('user@mu\u0308nchen.de')).to.deep.include({ ok: true, domain: 'xn--mnchen-3ya.de' });
  });

  it('says why it refuses', function () {
    expect(readMailbox('')).to.deep.equal({ ok: false, why: 'empty' });
    expect(readMailbox('a\r\nb@example.com')).to.deep.equal({ ok: false, why: 'control characters' });
    expect(readMailbox('example.com')).to.deep.equal({ ok: false, why: 'no local part or domain' });
    expect(readMailbox('a..b@example.com')).to.deep.equal({ ok: false, why: 'local part' });
    expect(readMailbox(`${'a'.repeat(65)}@example.com`)).to.deep.equal({
      ok: false,
      why: 'local part longer than 64 octets',
    });
    expect(readMailbox('a@[192.0.2.1]')).to.deep.equal({ ok: false, why: 'domain' });
    expect(readMailbox(`${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com`)).to.deep.equal({
      ok: false,
      why: 'longer than 254 octets',
    });
  });

  it('refuses a domain a URL host parser would cut short or decode', function () {
    for (const tail of ['/x.com', '?x', '#x', '\\x.com', '%2Ex', ':25', '@x.com']) {
      expect(readMailbox(`user@münchen.de${tail}`).ok, tail).to.equal(false);
    }
  });

  it('takes a non-string as no address', function () {
    expect(readMailbox(undefined as unknown as string)).to.deep.equal({ ok: false, why: 'empty' });
  });
});
