import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { addTracking } from '../../src/modules/sending/tracking/rewrite.js';
import { signTrackingToken, verifyTrackingToken } from '../../src/modules/sending/tracking/tracking-token.js';

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** the 22nd character of a 16-byte base64url string carries 2 bits: flipping its lowest bit changes only dropped bits */
const sameBytesLastChar = (c: string) => B64URL[B64URL.indexOf(c) ^ 1];
const otherChar = (c: string) => B64URL[(B64URL.indexOf(c) + 1) % 64];

describe('tracking tokens', function () {
  const key = randomBytes(32);
  const claim = {
    kind: 'click' as const,
    emailId: 'msg_01jabcdefghjkmnpqrstvwxyz0',
    recipientId: 'rcp_01jabcdefghjkmnpqrstvwxyz1',
    url: 'https://shop.example/p?id=1&x=2',
  };

  it('round-trips what was signed', function () {
    expect(verifyTrackingToken(key, signTrackingToken(key, claim))).to.deep.equal(claim);
    const open = { kind: 'open' as const, emailId: claim.emailId, recipientId: claim.recipientId };
    expect(verifyTrackingToken(key, signTrackingToken(key, open))).to.deep.equal(open);
  });

  it('refuses a changed URL, a changed MAC, another key and garbage', function () {
    const token = signTrackingToken(key, claim);
    const [payload, mac] = token.split('.') as [string, string];
    const evil = Buffer.from(JSON.stringify(['c', 'x', 'y', 'https://evil.example'])).toString('base64url');
    expect(verifyTrackingToken(key, `${evil}.${mac}`)).to.equal(null);
    expect(verifyTrackingToken(key, `${payload}.${mac.slice(0, -2)}AA`)).to.equal(null);
    expect(verifyTrackingToken(randomBytes(32), token)).to.equal(null);
    for (const junk of ['', '.', 'abc', 'a.b', `${payload}.`]) expect(verifyTrackingToken(key, junk)).to.equal(null);
  });

  it('refuses a MAC whose last character is spelled differently but decodes to the same bytes', function () {
    const token = signTrackingToken(key, claim);
    const alike = `${token.slice(0, -1)}${sameBytesLastChar(token.slice(-1))}`;
    expect(Buffer.from(alike.split('.')[1], 'base64url')).to.deep.equal(Buffer.from(token.split('.')[1], 'base64url'));
    expect(verifyTrackingToken(key, alike)).to.equal(null);
  });

  it('refuses a token with any one character changed, added or removed', function () {
    const token = signTrackingToken(key, claim);
    for (let i = 0; i < token.length; i++) {
      if (token[i] === '.') continue;
      expect(
        verifyTrackingToken(key, `${token.slice(0, i)}${otherChar(token[i])}${token.slice(i + 1)}`),
        `character ${i}`,
      ).to.equal(null);
    }
    for (const extra of ['A', '=', '!', ' '])
      expect(verifyTrackingToken(key, token + extra), JSON.stringify(extra)).to.equal(null);
    expect(verifyTrackingToken(key, token.slice(0, -1))).to.equal(null);
  });
});

describe('addTracking', function () {
  const click = (u: string) => `https://t.example/c/${encodeURIComponent(u)}`;

  it('rewrites http(s) links and leaves mailto, anchors and marked links alone', function () {
    const html = [
      '<a href="https://shop.example/a">A</a>',
      "<a class='x' href='http://shop.example/b?x=1&amp;y=2'>B</a>",
      '<a href="mailto:help@shop.example">mail</a>',
      '<a href="#top">top</a>',
      '<a href="https://shop.example/private" data-posthorn-notrack>keep</a>',
      '<a name="anchor">no href</a>',
    ].join('\n');
    const out = addTracking(html, { click });
    expect(out).to.include(`href="${click('https://shop.example/a')}"`);
    expect(out).to.include(`href="${click('http://shop.example/b?x=1&y=2')}"`);
    expect(out).to.include('href="mailto:help@shop.example"');
    expect(out).to.include('href="#top"');
    expect(out).to.include('<a href="https://shop.example/private">keep</a>');
    expect(out).to.include('<a name="anchor">no href</a>');
  });

  it('puts the pixel before </body>, or at the end', function () {
    expect(addTracking('<html><body><p>x</p></body></html>', { open: 'https://t.example/o/1' })).to.match(
      /<img src="https:\/\/t\.example\/o\/1" width="1" height="1"[^>]*\/><\/body><\/html>$/,
    );
    expect(addTracking('<p>x</p>', { open: 'https://t.example/o/1' })).to.match(/^<p>x<\/p><img /);
  });
});
