import { expect } from 'chai';
import { newId, randomBase62, timeOrderedId } from '../../src/lib/ids.js';
import { generateKeySecret, hashKey, looksLikeKey } from '../../src/modules/account/keys/key-format.js';

describe('ids', function () {
  it('sort in creation order, also within one millisecond', function () {
    const ids = Array.from({ length: 2000 }, () => newId('email', 1_700_000_000_000));
    expect([...ids].sort()).to.deep.equal(ids);
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it('sort later times after earlier ones', function () {
    const a = timeOrderedId(1_700_000_000_000);
    const b = timeOrderedId(1_700_000_000_001);
    expect(a < b).to.equal(true);
    expect(a).to.have.length(26);
  });

  it('differ in their random part from one millisecond to the next, past refills of the random pool', function () {
    // one fresh random part per millisecond: 1,000 of them draw 10 KB, more than two refills of the pool
    const randoms = Array.from({ length: 1000 }, (_, i) => timeOrderedId(1_800_000_000_000 + i).slice(10));
    expect(new Set(randoms).size).to.equal(randoms.length);
  });

  it('carry the resource prefix', function () {
    expect(newId('email')).to.match(/^msg_[0-9a-z]{26}$/);
    expect(newId('request')).to.match(/^req_[0-9a-z]{26}$/);
    expect(newId('domain')).to.match(/^dom_/);
  });
});

describe('API key format', function () {
  it('is ph_<mode>_ and 40 base62 characters (CONTRACT §4)', function () {
    const live = generateKeySecret('live');
    const test = generateKeySecret('test');
    expect(live.key).to.match(/^ph_live_[A-Za-z0-9]{40}$/);
    expect(test.key).to.match(/^ph_test_[A-Za-z0-9]{40}$/);
    expect(looksLikeKey(live.key)).to.equal(true);
    expect(looksLikeKey(live.key + 'x')).to.equal(false);
    expect(looksLikeKey('ph_prod_' + live.key.slice(8))).to.equal(false);
  });

  it('is stored as a SHA-256 hash that is not the key', function () {
    const k = generateKeySecret('test');
    expect(k.hash).to.match(/^[0-9a-f]{64}$/);
    expect(k.hash).to.equal(hashKey(k.key));
    expect(k.hash).to.not.include(k.key.slice(8));
    // the display prefix is the mode only: no character of the secret is kept
    expect(k.prefix).to.equal('ph_test_');
  });

  it('draws every base62 character', function () {
    const seen = new Set(randomBase62(20_000));
    expect(seen.size).to.equal(62);
  });
});
