import { expect } from 'chai';
import { parseAddress } from '../../src/lib/address.js';

describe('parseAddress', function () {
  const ok: Array<[string, string, string | null, string]> = [
    ['user@example.com', 'user@example.com', null, 'user@example.com'],
    ['  User@Example.COM ', 'User@example.com', null, 'User@example.com'],
    ['Ann <ann@example.com>', 'ann@example.com', 'Ann', 'Ann <ann@example.com>'],
    ['"Last, First" <first@example.com>', 'first@example.com', 'Last, First', '"Last, First" <first@example.com>'],
    ['<bare@example.com>', 'bare@example.com', null, 'bare@example.com'],
    [
      'Jörg <jörg@bücher.de>'.replace('jörg@', 'joerg@'),
      'joerg@xn--bcher-kva.de',
      'Jörg',
      'Jörg <joerg@xn--bcher-kva.de>',
    ],
    ['a.b+tag@sub.example.co.uk', 'a.b+tag@sub.example.co.uk', null, 'a.b+tag@sub.example.co.uk'],
    ['"john doe"@example.com', '"john doe"@example.com', null, '"john doe"@example.com'],
    ['x@xn--bcher-kva.de', 'x@xn--bcher-kva.de', null, 'x@xn--bcher-kva.de'],
    ['"He said \\"hi\\"" <q@example.com>', 'q@example.com', 'He said "hi"', '"He said \\"hi\\"" <q@example.com>'],
    // 254 in all, as interface §8 allows, with a local part longer than RFC 5321's 64
    [`${'a'.repeat(242)}@example.com`, `${'a'.repeat(242)}@example.com`, null, `${'a'.repeat(242)}@example.com`],
  ];
  for (const [input, address, name, formatted] of ok) {
    it(`reads ${JSON.stringify(input)}`, function () {
      const r = parseAddress(input);
      expect(r.ok, JSON.stringify(r)).to.equal(true);
      if (r.ok) expect(r.value).to.deep.include({ address, name, formatted });
    });
  }

  const bad: Array<[string, RegExp]> = [
    ['', /empty/],
    ['plainaddress', /name@example/],
    ['@example.com', /name@example/],
    ['user@', /name@example/],
    ['user@localhost', /dot/],
    ['user@[192.168.0.1]', /IP address/],
    ['user@192.168.0.1', /IP address/],
    ['a@b@c.com', /local part/],
    ['user name@example.com', /exactly one/],
    ['a@example.com, b@example.com', /exactly one/],
    ['Name <a@example.com', /name followed/],
    ['Name a@example.com>', /name followed/],
    ['x\r\n@example.com', /line breaks/],
    ['a@example.com\nBcc: c@d.e', /line breaks/],
    ['.user@example.com', /local part/],
    ['user.@example.com', /local part/],
    ['us..er@example.com', /local part/],
    ['jörg@example.com', /local part/],
    [`${'a'.repeat(243)}@example.com`, /at most 254 characters/],
    [`a@${'b'.repeat(64)}.com`, /invalid domain/],
    [`a@-example.com`, /invalid domain/],
    [`${'a'.repeat(60)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com`, /254/],
    ['"unbalanced <a@example.com>', /quotes/],
  ];
  for (const [input, reason] of bad) {
    it(`refuses ${JSON.stringify(input).slice(0, 50)}`, function () {
      const r = parseAddress(input);
      expect(r.ok).to.equal(false);
      if (!r.ok) expect(r.reason).to.match(reason);
    });
  }
});
