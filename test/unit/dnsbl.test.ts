import { expect } from 'chai';
import {
  DEFAULT_BLOCKLISTS,
  changes,
  lastKnown,
  queryName,
  targetKind,
  validateBlocklist,
  validateBlocklists,
  type Blocklist,
  type PairState,
} from '../../src/modules/deliverability/blocklists/dnsbl.js';
import { cacheSeconds, judgeAnswer } from '../../src/modules/deliverability/blocklists/dnsbl-answers.js';

const zen: Blocklist = { zone: 'zen.spamhaus.org', kind: 'ip' };
const dbl: Blocklist = { zone: 'dbl.spamhaus.org', kind: 'domain' };
const dqs: Blocklist = { zone: 'abcdefkey.zen.dq.spamhaus.net', kind: 'ip' };
const uribl: Blocklist = { zone: 'multi.uribl.com', kind: 'domain' };
const surbl: Blocklist = { zone: 'multi.surbl.org', kind: 'domain' };
const spamcop: Blocklist = { zone: 'bl.spamcop.net', kind: 'ip' };
const psbl: Blocklist = { zone: 'psbl.surriel.com', kind: 'ip' };

const nibbles = (hex32: string) => hex32.split('').reverse().join('.');

describe('DNS blocklists (dnsbl.ts)', function () {
  describe('queryName', function () {
    it('reverses the octets of an IPv4 address under the zone (RFC 5782 §2.1)', function () {
      expect(queryName('192.0.2.5', zen)).to.equal('5.2.0.192.zen.spamhaus.org');
      expect(queryName(' 192.0.2.5 ', { zone: 'Zen.Spamhaus.org.', kind: 'ip' })).to.equal(
        '5.2.0.192.zen.spamhaus.org',
      );
    });

    it('writes an IPv6 address as its 32 nibbles reversed, whatever form it came in (RFC 5782 §2.4)', function () {
      const expected = `${nibbles('20010db8000000000000000000000001')}.zen.spamhaus.org`;
      expect(queryName('2001:db8::1', zen)).to.equal(expected);
      expect(queryName('2001:0DB8:0000:0000:0000:0000:0000:0001', zen)).to.equal(expected);
      expect(expected.split('.')).to.have.length(32 + 3);
    });

    it('asks an IPv4-mapped IPv6 address as the IPv4 address lists hold', function () {
      expect(queryName('::ffff:192.0.2.5', zen)).to.equal('5.2.0.192.zen.spamhaus.org');
      expect(queryName('::ffff:c000:205', zen)).to.equal('5.2.0.192.zen.spamhaus.org');
    });

    it('puts a domain, lower-cased and without its final dot, before the zone of a domain list; IDNs as A-labels', function () {
      expect(queryName('Mail.Example.COM.', dbl)).to.equal('mail.example.com.dbl.spamhaus.org');
      expect(queryName('bücher.example', uribl)).to.equal('xn--bcher-kva.example.multi.uribl.com');
    });

    it('refuses an IP on a domain list, a domain on an IP list, and what is neither', function () {
      expect(queryName('192.0.2.5', dbl)).to.equal(null);
      expect(queryName('2001:db8::1', surbl)).to.equal(null);
      expect(queryName('example.com', zen)).to.equal(null);
      for (const bad of ['', '256.1.1.1', '1.2.3', 'localhost', '-bad-.example', 'a b.example', 'example.123']) {
        expect(queryName(bad, zen), bad).to.equal(null);
        expect(queryName(bad, dbl), bad).to.equal(null);
      }
    });

    it('refuses a name that would pass 253 characters', function () {
      const long = `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(50)}.example`;
      expect(long.length).to.be.below(254);
      expect(queryName(long, dbl)).to.equal(null);
      expect(queryName(long, { zone: 'x.example', kind: 'domain' })).to.equal(`${long}.x.example`);
    });
  });

  it('targetKind tells IPs from domains from neither', function () {
    expect(targetKind('192.0.2.5')).to.equal('ip');
    expect(targetKind('2001:db8::1')).to.equal('ip');
    expect(targetKind('::ffff:192.0.2.5')).to.equal('ip');
    expect(targetKind('example.com')).to.equal('domain');
    expect(targetKind('not a target')).to.equal(null);
  });

  describe('judgeAnswer', function () {
    it('is clear on NXDOMAIN and on no records', function () {
      expect(judgeAnswer(zen, 'nxdomain')).to.deep.equal({ state: 'clear', codes: [] });
      expect(judgeAnswer(uribl, [])).to.deep.equal({ state: 'clear', codes: [] });
    });

    for (const code of ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.9', '127.0.0.10', '127.0.0.11', '127.0.0.30']) {
      it(`counts Spamhaus ZEN's ${code} as listed`, function () {
        expect(judgeAnswer(zen, [code])).to.deep.include({ state: 'listed', codes: [code] });
      });
    }

    for (const code of [
      '127.0.1.2',
      '127.0.1.4',
      '127.0.1.5',
      '127.0.1.6',
      '127.0.1.102',
      '127.0.1.103',
      '127.0.1.104',
      '127.0.1.105',
      '127.0.1.106',
    ]) {
      it(`counts Spamhaus DBL's ${code} as listed`, function () {
        expect(judgeAnswer(dbl, [code])).to.deep.include({ state: 'listed', codes: [code] });
      });
    }

    it('keeps every code of a multi-record answer, sorted and once each', function () {
      expect(judgeAnswer(zen, ['127.0.0.4', '127.0.0.2', '127.0.0.4'])).to.deep.include({
        state: 'listed',
        codes: ['127.0.0.2', '127.0.0.4'],
      });
    });

    const spamhausErrors: [string, RegExp][] = [
      ['127.255.255.254', /refuses queries through this resolver.*public or open resolver.*dns\.resolvers/],
      ['127.255.255.255', /too many queries.*dns\.resolvers/],
      ['127.255.255.252', /mistyped zone/],
      ['127.255.255.250', /Spamhaus error code 127\.255\.255\.250/],
    ];
    for (const [code, reason] of spamhausErrors) {
      it(`takes Spamhaus's ${code} for an error, never a listing, on ZEN, DBL and DQS zones`, function () {
        for (const list of [zen, dbl, dqs]) {
          const v = judgeAnswer(list, [code]);
          expect(v.state, list.zone).to.equal('error');
          expect(v.codes).to.deep.equal([code]);
          expect(v.reason).to.match(reason);
        }
      });
    }

    it("takes the DBL's 127.0.1.255 (an IP asked of a domain list) for an error", function () {
      expect(judgeAnswer(dbl, ['127.0.1.255'])).to.deep.include({ state: 'error' });
    });

    it('lets an error code among listing codes make the whole answer an error', function () {
      expect(judgeAnswer(zen, ['127.0.0.2', '127.255.255.254']).state).to.equal('error');
    });

    it("takes URIBL's 127.0.0.1 for a refused query and names the bitmask's lists otherwise", function () {
      const refused = judgeAnswer(uribl, ['127.0.0.1']);
      expect(refused.state).to.equal('error');
      expect(refused.reason).to.match(/^the list refuses queries through this resolver.*URIBL.*dns\.resolvers/);
      expect(judgeAnswer(uribl, ['127.0.0.2'])).to.deep.equal({
        state: 'listed',
        codes: ['127.0.0.2'],
        reason: 'listed on black',
      });
      expect(judgeAnswer(uribl, ['127.0.0.14']).reason).to.equal('listed on black, grey, red');
    });

    it("takes SURBL's 127.0.0.1 for blocked access and reads its bitmask", function () {
      expect(judgeAnswer(surbl, ['127.0.0.1'])).to.deep.include({ state: 'error' });
      expect(judgeAnswer(surbl, ['127.0.0.1']).reason).to.match(/SURBL.*access blocked/);
      expect(judgeAnswer(surbl, ['127.0.0.8']).reason).to.equal('listed on PH');
      expect(judgeAnswer(surbl, ['127.0.0.80'])).to.deep.equal({
        state: 'listed',
        codes: ['127.0.0.80'],
        reason: 'listed on MW, ABUSE',
      });
    });

    it('counts 127.0.0.2-255 as listed on other lists, 127.0.0.1 and other 127/8 answers as errors', function () {
      for (const list of [spamcop, psbl, { zone: 'b.barracudacentral.org', kind: 'ip' } as Blocklist]) {
        expect(judgeAnswer(list, ['127.0.0.2']).state, list.zone).to.equal('listed');
        expect(judgeAnswer(list, ['127.0.0.255']).state, list.zone).to.equal('listed');
        expect(judgeAnswer(list, ['127.0.0.1']).state, list.zone).to.equal('error');
        expect(judgeAnswer(list, ['127.0.1.2']).reason, list.zone).to.match(/no listing code of/);
      }
    });

    it('takes an answer outside 127.0.0.0/8 for an error on every list (a rewriting resolver or a dead list)', function () {
      for (const list of [zen, dbl, uribl, surbl, spamcop]) {
        const v = judgeAnswer(list, ['198.51.100.7']);
        expect(v.state, list.zone).to.equal('error');
        expect(v.reason).to.match(/^unexpected answer 198\.51\.100\.7/);
      }
      expect(judgeAnswer(spamcop, ['127.0.0.2', '198.51.100.7']).state).to.equal('error');
    });

    it("gives a listing the list's TXT as its reason when there is one", function () {
      const v = judgeAnswer(zen, ['127.0.0.2'], ['Listed by SBL, see https://check.spamhaus.org/sbl/query/SBL1']);
      expect(v).to.deep.equal({
        state: 'listed',
        codes: ['127.0.0.2'],
        reason: 'Listed by SBL, see https://check.spamhaus.org/sbl/query/SBL1',
      });
      expect(judgeAnswer(zen, ['127.0.0.2'], [])).to.deep.equal({ state: 'listed', codes: ['127.0.0.2'] });
    });
  });

  it('cacheSeconds keeps a TTL between 5 minutes and a day, errors 5 minutes, NXDOMAIN an hour', function () {
    expect(cacheSeconds('listed', 'records', 10)).to.equal(300);
    expect(cacheSeconds('listed', 'records', 900)).to.equal(900);
    expect(cacheSeconds('clear', 'records', 2_000_000)).to.equal(86_400);
    expect(cacheSeconds('error', 'records', 86_400)).to.equal(300);
    expect(cacheSeconds('clear', 'nxdomain', 0)).to.equal(3600);
  });

  describe('validateBlocklist', function () {
    it('accepts an entry and normalizes its zone', function () {
      expect(
        validateBlocklist({ zone: ' DNSBL.Example.org. ', kind: 'ip', name: ' Example ' }, 'blocklists[0]'),
      ).to.deep.equal({ ok: true, list: { zone: 'dnsbl.example.org', kind: 'ip', name: 'Example' } });
    });

    const refused: [unknown, RegExp][] = [
      [
        { zone: 'bl.example.org', kind: 'ipv4' },
        /^blocklists\[3\] \(bl\.example\.org\): kind must be 'ip' or 'domain'$/,
      ],
      [{ kind: 'ip' }, /^blocklists\[3\]: zone must be a DNS name/],
      [{ zone: '127.0.0.1', kind: 'ip' }, /^blocklists\[3\] \(127\.0\.0\.1\): zone is not a DNS name/],
      [{ zone: 'nodots', kind: 'ip' }, /zone is not a DNS name/],
      [{ zone: 'bad zone.example', kind: 'domain' }, /zone is not a DNS name/],
      [{ zone: '-x.example', kind: 'domain' }, /zone is not a DNS name/],
      [{ zone: `${'a.'.repeat(95)}example`, kind: 'ip' }, /longer than 189 characters/],
      [{ zone: 'bl.example.org', kind: 'ip', type: 'a' }, /^blocklists\[3\] \(bl\.example\.org\): unknown key 'type'/],
      [{ zone: 'bl.example.org', kind: 'ip', name: '' }, /name must be a non-empty string/],
      ['zen.spamhaus.org', /^blocklists\[3\]: must be an object/],
    ];
    for (const [entry, message] of refused) {
      it(`refuses ${JSON.stringify(entry).slice(0, 70)} naming the entry`, function () {
        const r = validateBlocklist(entry, 'blocklists[3]');
        expect(r.ok).to.equal(false);
        expect(!r.ok && r.message).to.match(message);
      });
    }

    it('refuses a zone listed twice, naming the second entry', function () {
      const r = validateBlocklists([
        { zone: 'zen.spamhaus.org', kind: 'ip' },
        { zone: 'ZEN.spamhaus.org', kind: 'ip' },
      ]);
      expect(r).to.deep.equal({ ok: false, message: 'blocklists[1] (zen.spamhaus.org): the zone is listed twice' });
    });

    it('accepts the default lists', function () {
      expect(validateBlocklists(DEFAULT_BLOCKLISTS)).to.deep.equal({ ok: true, lists: DEFAULT_BLOCKLISTS });
    });
  });

  describe('changes', function () {
    const s = (target: string, zone: string, state: PairState['state']): PairState => ({ target, zone, state });

    it('reports clear → listed and a first listing as listed, listed → clear as cleared', function () {
      const previous = [
        s('192.0.2.1', 'zen.spamhaus.org', 'clear'),
        s('example.com', 'dbl.spamhaus.org', 'listed'),
        s('192.0.2.1', 'bl.spamcop.net', 'listed'),
      ];
      const current = [
        s('192.0.2.1', 'zen.spamhaus.org', 'listed'),
        s('example.com', 'dbl.spamhaus.org', 'clear'),
        s('192.0.2.1', 'bl.spamcop.net', 'listed'),
        s('192.0.2.9', 'psbl.surriel.com', 'listed'),
        s('192.0.2.9', 'zen.spamhaus.org', 'clear'),
      ];
      expect(changes(previous, current)).to.deep.equal({
        listed: [
          { target: '192.0.2.1', zone: 'zen.spamhaus.org' },
          { target: '192.0.2.9', zone: 'psbl.surriel.com' },
        ],
        cleared: [{ target: 'example.com', zone: 'dbl.spamhaus.org' }],
      });
    });

    it('counts no error as a change, either way', function () {
      expect(
        changes([s('a.example', 'dbl.spamhaus.org', 'listed')], [s('a.example', 'dbl.spamhaus.org', 'error')]),
      ).to.deep.equal({ listed: [], cleared: [] });
      expect(
        changes([s('a.example', 'dbl.spamhaus.org', 'error')], [s('a.example', 'dbl.spamhaus.org', 'listed')]),
      ).to.deep.equal({ listed: [], cleared: [] });
      expect(
        changes([s('a.example', 'dbl.spamhaus.org', 'error')], [s('a.example', 'dbl.spamhaus.org', 'clear')]),
      ).to.deep.equal({ listed: [], cleared: [] });
    });

    it('matches pairs whatever the case of the target', function () {
      expect(
        changes([s('A.Example', 'dbl.spamhaus.org', 'listed')], [s('a.example', 'dbl.spamhaus.org', 'listed')]),
      ).to.deep.equal({ listed: [], cleared: [] });
    });

    it('lastKnown keeps a listing across an error, so the next clear is a delisting', function () {
      const kept = lastKnown(
        [s('a.example', 'dbl.spamhaus.org', 'listed')],
        [s('a.example', 'dbl.spamhaus.org', 'error')],
      );
      expect(kept).to.deep.equal([s('a.example', 'dbl.spamhaus.org', 'listed')]);
      expect(changes(kept, [s('a.example', 'dbl.spamhaus.org', 'clear')]).cleared).to.deep.equal([
        { target: 'a.example', zone: 'dbl.spamhaus.org' },
      ]);
    });
  });
});
