import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import {
  asksForUnsubscribe,
  unsubscribeHeaders,
  wantsAutoUnsubscribe,
  withAutoUnsubscribe,
} from '../../src/modules/sending/emails/list-unsubscribe.js';
import {
  signUnsubscribeToken,
  verifyUnsubscribeToken,
} from '../../src/modules/receiving/unsubscribe/unsubscribe-token.js';
import { newId } from '../../src/lib/ids.js';

describe('one-click unsubscribe (pure)', function () {
  const key = randomBytes(32);
  const id = newId('recipient');

  it('a token names its recipient, fits an address local part (lower case, ≤ 64 with unsubscribe+), and only this key makes it', function () {
    const token = signUnsubscribeToken(key, id);
    expect(`unsubscribe+${token}`.length).to.be.at.most(64);
    expect(token).to.match(/^[0-9a-z-]+$/);
    expect(verifyUnsubscribeToken(key, token)).to.equal(id);
    // mail systems may upper-case a local part
    expect(verifyUnsubscribeToken(key, token.toUpperCase())).to.equal(id);
    expect(verifyUnsubscribeToken(randomBytes(32), token)).to.equal(null);
    const [rid, mac] = token.split('-');
    const other = newId('recipient').slice(4);
    expect(verifyUnsubscribeToken(key, `${other}-${mac}`)).to.equal(null);
    expect(verifyUnsubscribeToken(key, `${rid}-${mac.slice(0, -1)}${mac.endsWith('0') ? '1' : '0'}`)).to.equal(null);
    for (const bad of ['', '-', 'x', `${rid}`, `${rid}-${mac}-x`, `${rid}-zz`])
      expect(verifyUnsubscribeToken(key, bad), bad).to.equal(null);
  });

  it('a send asks for List-Unsubscribe with the header (<auto> or its own), in any case; a domain adds <auto> only when the send has none', function () {
    expect(asksForUnsubscribe({})).to.equal(false);
    expect(asksForUnsubscribe({ 'list-UNSUBSCRIBE': '<mailto:x@y>' })).to.equal(true);
    expect(wantsAutoUnsubscribe({ 'List-Unsubscribe': ' <AUTO> ' })).to.equal(true);
    expect(wantsAutoUnsubscribe({ 'List-Unsubscribe': '<mailto:x@y>' })).to.equal(false);
    expect(withAutoUnsubscribe({ 'X-A': '1' })).to.deep.equal({ 'X-A': '1', 'List-Unsubscribe': '<auto>' });
    expect(withAutoUnsubscribe({ 'list-unsubscribe': '<mailto:x@y>' })).to.deep.equal({
      'list-unsubscribe': '<mailto:x@y>',
    });
  });

  it('writes the recipient’s links: HTTPS first with List-Unsubscribe-Post, the mailto alone without an HTTPS link; other headers kept', function () {
    const links = { url: 'https://mail.example/u/t1', mailto: 'unsubscribe+t1@send.shop.example' };
    expect(
      unsubscribeHeaders({ 'X-A': '1', 'list-unsubscribe': '<auto>', 'List-Unsubscribe-Post': 'x' }, links),
    ).to.deep.equal({
      'X-A': '1',
      'List-Unsubscribe': '<https://mail.example/u/t1>, <mailto:unsubscribe+t1@send.shop.example?subject=unsubscribe>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    });
    expect(unsubscribeHeaders({ 'List-Unsubscribe': '<auto>' }, { ...links, url: null })).to.deep.equal({
      'List-Unsubscribe': '<mailto:unsubscribe+t1@send.shop.example?subject=unsubscribe>',
    });
    const own = { 'List-Unsubscribe': '<mailto:x@y>' };
    expect(unsubscribeHeaders(own, links)).to.equal(own);
  });
});
