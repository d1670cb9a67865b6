import { expect } from 'chai';
import {
  mxMatchesPolicy,
  parseStsPolicy,
  parseStsTxt,
  stsCacheDecision,
  stsOnFetchFailure,
  stsPolicyReportStrings,
  stsPolicyUrl,
  stsShouldRefresh,
  stsVerdict,
  type StsCached,
  type StsPolicy,
} from '../../src/mta/tls-policy/mta-sts.js';

describe('MTA-STS (RFC 8461)', function () {
  describe('parseStsTxt (§3.1)', function () {
    const table: Array<[string, string[][], { id: string } | 'error' | null]> = [
      ['the RFC example', [['v=STSv1; id=20160831085700Z;']], { id: '20160831085700Z' }],
      ['no trailing delimiter', [['v=STSv1;id=abc123']], { id: 'abc123' }],
      ['split into strings, joined without spaces', [['v=STSv1; id=2016', '0831']], { id: '20160831' }],
      ['whitespace around ";" (errata 6285)', [['v=STSv1 ; id=x1 ;']], { id: 'x1' }],
      ['other TXT records discarded', [['google-site-verification=abc'], ['v=STSv1; id=1']], { id: '1' }],
      ['unknown fields ignored', [['v=STSv1; foo=bar; id=7; x.y-z=1']], { id: '7' }],
      ['a repeated id: the first wins', [['v=STSv1; id=first; id=second']], { id: 'first' }],
      ['32 characters is the longest id', [[`v=STSv1; id=${'a'.repeat(32)}`]], { id: 'a'.repeat(32) }],
      ['no record', [], null],
      ['no STSv1 record', [['v=spf1 -all']], null],
      ['another version is not a candidate', [['v=STSv10; id=1']], null],
      ['the version is case-sensitive', [['v=stsv1; id=1']], null],
      ['two STSv1 records', [['v=STSv1; id=1'], ['v=STSv1; id=2']], 'error'],
      ['no id', [['v=STSv1;']], 'error'],
      ['bare version', [['v=STSv1']], 'error'],
      ['id of 33 characters', [[`v=STSv1; id=${'a'.repeat(33)}`]], 'error'],
      ['id with a hyphen', [['v=STSv1; id=2016-08-31']], 'error'],
      ['empty id', [['v=STSv1; id=']], 'error'],
      ['spaces around "="', [['v=STSv1; id = 1']], 'error'],
      ['an empty field in the middle', [['v=STSv1;; id=1']], 'error'],
      ['non-ASCII', [['v=STSv1; id=1; n=é']], 'error'],
    ];
    for (const [name, records, expected] of table) {
      it(`${name} → ${expected === null ? 'null' : expected === 'error' ? 'error' : expected.id}`, function () {
        const got = parseStsTxt(records);
        if (expected === 'error') expect(got).to.have.property('error').that.is.a('string');
        else expect(got).to.deep.equal(expected);
      });
    }
  });

  describe('parseStsPolicy (§3.2)', function () {
    const ok = 'version: STSv1\r\nmode: enforce\r\nmx: mail.example.com\r\nmx: *.example.net\r\nmax_age: 604800\r\n';
    const expected: StsPolicy = {
      version: 'STSv1',
      mode: 'enforce',
      mx: ['mail.example.com', '*.example.net'],
      maxAgeSeconds: 604800,
    };

    it('parses CRLF-separated lines', function () {
      expect(parseStsPolicy(ok)).to.deep.equal(expected);
    });
    it('parses LF-separated lines, and mixed ones', function () {
      expect(parseStsPolicy(ok.replace(/\r\n/g, '\n'))).to.deep.equal(expected);
      expect(parseStsPolicy(ok.replace('\r\n', '\n'))).to.deep.equal(expected);
    });
    it('accepts no final line break, trailing whitespace and blank lines', function () {
      expect(
        parseStsPolicy('version: STSv1\nmode:enforce  \n\nmx:   mail.example.com\t\nmax_age: 0\n\n'),
      ).to.deep.equal({ version: 'STSv1', mode: 'enforce', mx: ['mail.example.com'], maxAgeSeconds: 0 });
    });
    it('ignores unknown keys, and repeated keys other than mx after the first', function () {
      const text =
        'version: STSv1\nmode: testing\nmode: enforce\nfoo: bar baz\nmx: a.example\nmax_age: 86400\nmax_age: 1';
      expect(parseStsPolicy(text)).to.deep.equal({
        version: 'STSv1',
        mode: 'testing',
        mx: ['a.example'],
        maxAgeSeconds: 86400,
      });
    });
    it('mode none needs no mx', function () {
      expect(parseStsPolicy('version: STSv1\nmode: none\nmax_age: 86400\n')).to.deep.equal({
        version: 'STSv1',
        mode: 'none',
        mx: [],
        maxAgeSeconds: 86400,
      });
    });
    it('max_age 31557600 is the largest allowed', function () {
      expect(parseStsPolicy('version: STSv1\nmode: none\nmax_age: 31557600')).to.have.property(
        'maxAgeSeconds',
        31557600,
      );
    });

    const bad: Array<[string, string]> = [
      ['no version', 'mode: enforce\nmx: a.example\nmax_age: 1'],
      ['another version', 'version: STSv2\nmode: enforce\nmx: a.example\nmax_age: 1'],
      ['no mode', 'version: STSv1\nmx: a.example\nmax_age: 1'],
      ['an unknown mode', 'version: STSv1\nmode: report\nmx: a.example\nmax_age: 1'],
      ['a mode in capitals', 'version: STSv1\nmode: Enforce\nmx: a.example\nmax_age: 1'],
      ['no max_age', 'version: STSv1\nmode: enforce\nmx: a.example'],
      ['max_age too large', 'version: STSv1\nmode: enforce\nmx: a.example\nmax_age: 31557601'],
      ['max_age of 11 digits', 'version: STSv1\nmode: enforce\nmx: a.example\nmax_age: 00000000001'],
      ['negative max_age', 'version: STSv1\nmode: enforce\nmx: a.example\nmax_age: -1'],
      ['max_age not a number', 'version: STSv1\nmode: enforce\nmx: a.example\nmax_age: 1d'],
      ['enforce without mx', 'version: STSv1\nmode: enforce\nmax_age: 86400'],
      ['testing without mx', 'version: STSv1\nmode: testing\nmax_age: 86400'],
      ['a wildcard inside the mx', 'version: STSv1\nmode: enforce\nmx: mail.*.example\nmax_age: 1'],
      ['a line without a colon', 'version: STSv1\nmode enforce\nmx: a.example\nmax_age: 1'],
      ['an HTML page', '<html><body>version: STSv1</body></html>'],
      ['an empty body', ''],
    ];
    for (const [name, text] of bad) {
      it(`rejects ${name}`, function () {
        expect(parseStsPolicy(text)).to.have.property('error').that.is.a('string');
      });
    }
    it('rejects a body larger than 64 KiB', function () {
      const big = `${ok}x-padding: ${'a'.repeat(64 * 1024)}\n`;
      expect(parseStsPolicy(big))
        .to.have.property('error')
        .that.matches(/larger/);
      expect(parseStsPolicy(`${ok}x: ${'a'.repeat(60 * 1024)}`)).to.deep.equal(expected);
    });
  });

  describe('mxMatchesPolicy (§4.1)', function () {
    const table: Array<[string, string[], boolean]> = [
      ['mail.example.com', ['mail.example.com'], true],
      ['MAIL.Example.COM', ['mail.example.com'], true],
      ['mail.example.com.', ['mail.example.com'], true],
      ['mail.example.com', ['Mail.Example.Com.'], true],
      ['mail.example.com', ['*.example.com'], true],
      ['mail.example.com.', ['*.EXAMPLE.com.'], true],
      ['a.b.example.com', ['*.example.com'], false],
      ['example.com', ['*.example.com'], false],
      ['xexample.com', ['*.example.com'], false],
      ['mail.example.org', ['*.example.com', 'mail.example.org'], true],
      ['other.example.com', ['mail.example.com'], false],
      ['mail.example.com', [], false],
      ['', ['*.example.com'], false],
      ['mail.example.com', ['*'], false],
    ];
    for (const [host, patterns, expected] of table) {
      it(`${host || '(empty)'} against ${JSON.stringify(patterns)} → ${expected}`, function () {
        expect(mxMatchesPolicy(host, patterns)).to.equal(expected);
      });
    }
  });

  it('stsPolicyUrl is the well-known path on the mta-sts host (§3.2)', function () {
    expect(stsPolicyUrl('example.com')).to.equal('https://mta-sts.example.com/.well-known/mta-sts.txt');
    expect(stsPolicyUrl('Example.COM.')).to.equal('https://mta-sts.example.com/.well-known/mta-sts.txt');
  });

  describe('the cache (§3.3, §5.1)', function () {
    const policy: StsPolicy = { version: 'STSv1', mode: 'enforce', mx: ['mx.example'], maxAgeSeconds: 3600 };
    const t0 = 1_700_000_000_000;
    const cached: StsCached = { id: 'abc', fetchedAt: t0, policy };
    const fresh = t0 + 1000;
    const expired = t0 + 3600 * 1000;

    const table: Array<[string, StsCached | null, { id: string } | { error: string } | null, number, string]> = [
      ['same id, fresh', cached, { id: 'abc' }, fresh, 'use_cached'],
      ['new id, fresh', cached, { id: 'def' }, fresh, 'fetch'],
      ['same id, expired', cached, { id: 'abc' }, expired, 'fetch'],
      ['no TXT, fresh', cached, null, fresh, 'use_cached'],
      ['invalid TXT, fresh', cached, { error: 'two records' }, fresh, 'use_cached'],
      ['no TXT, expired', cached, null, expired, 'none'],
      ['no cache, TXT', null, { id: 'abc' }, fresh, 'fetch'],
      ['no cache, no TXT', null, null, fresh, 'none'],
      ['no cache, invalid TXT', null, { error: 'x' }, fresh, 'none'],
    ];
    for (const [name, c, txt, now, expected] of table) {
      it(`${name} → ${expected}`, function () {
        expect(stsCacheDecision(c, txt, now)).to.equal(expected);
      });
    }

    it('max_age 0 is never fresh', function () {
      const zero: StsCached = { id: 'a', fetchedAt: t0, policy: { ...policy, maxAgeSeconds: 0 } };
      expect(stsCacheDecision(zero, { id: 'a' }, t0)).to.equal('fetch');
      expect(stsOnFetchFailure(zero, t0)).to.equal(null);
    });

    it('a failed fetch keeps an unexpired cached policy, else none', function () {
      expect(stsOnFetchFailure(cached, fresh)).to.equal(policy);
      expect(stsOnFetchFailure(cached, expired)).to.equal(null);
      expect(stsOnFetchFailure(null, fresh)).to.equal(null);
    });

    it('a policy fetched over a day ago is due for a refresh while still valid', function () {
      const long: StsCached = { id: 'a', fetchedAt: t0, policy: { ...policy, maxAgeSeconds: 7 * 86400 } };
      expect(stsShouldRefresh(long, t0 + 3600 * 1000)).to.equal(false);
      expect(stsShouldRefresh(long, t0 + 86400 * 1000)).to.equal(true);
      expect(stsShouldRefresh(long, t0 + 7 * 86400 * 1000)).to.equal(false);
      expect(stsShouldRefresh(null, t0)).to.equal(false);
    });
  });

  describe('stsVerdict (§4, §5)', function () {
    const mk = (mode: StsPolicy['mode']): StsPolicy => ({
      version: 'STSv1',
      mode,
      mx: mode === 'none' ? [] : ['*.mail.example'],
      maxAgeSeconds: 86400,
    });
    const table: Array<[string, StsPolicy | null, string, [boolean, boolean, boolean, boolean]]> = [
      ['enforce, matching MX', mk('enforce'), 'mx1.mail.example', [true, true, true, true]],
      ['enforce, MX not in the policy', mk('enforce'), 'mx1.evil.example', [false, true, true, true]],
      ['enforce, wildcard too deep', mk('enforce'), 'a.mx1.mail.example', [false, true, true, true]],
      ['testing, matching MX', mk('testing'), 'mx1.mail.example', [true, false, false, true]],
      ['testing, MX not in the policy', mk('testing'), 'mx1.evil.example', [true, false, false, true]],
      ['none', mk('none'), 'mx1.mail.example', [true, false, false, false]],
      ['no policy', null, 'mx1.mail.example', [true, false, false, false]],
    ];
    for (const [name, policy, host, [allowed, requireTls, requirePkix, report]] of table) {
      it(name, function () {
        expect(stsVerdict(policy, host)).to.include({ allowed, requireTls, requirePkix, report });
      });
    }
    it('tells testing mode whether the MX matched, for the report', function () {
      expect(stsVerdict(mk('testing'), 'mx1.evil.example').mxMatches).to.equal(false);
      expect(stsVerdict(mk('testing'), 'mx1.mail.example').mxMatches).to.equal(true);
    });
  });

  it('stsPolicyReportStrings lists each mx as its own element (RFC 8460 §4.5)', function () {
    const p: StsPolicy = {
      version: 'STSv1',
      mode: 'testing',
      mx: ['mx1.example.com', 'mx2.example.com'],
      maxAgeSeconds: 604800,
    };
    expect(stsPolicyReportStrings(p)).to.deep.equal([
      'version: STSv1',
      'mode: testing',
      'mx: mx1.example.com',
      'mx: mx2.example.com',
      'max_age: 604800',
    ]);
  });
});
