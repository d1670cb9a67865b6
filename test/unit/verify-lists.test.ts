import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAddressLists } from '../../src/modules/deliverability/verify/lists.js';
import { suggestDomain } from '../../src/modules/deliverability/verify/typo.js';
import { tempDir } from '../helpers/temp-dir.js';

// issue 22: the disposable, role and free-provider lists, and typo suggestions
describe('address verification lists', function () {
  const lists = loadAddressLists({ disposableFile: null });

  it('knows the community list’s disposable domains, and their subdomains', function () {
    expect(lists.isDisposable('mailinator.com')).to.equal(true);
    expect(lists.isDisposable('eu.mailinator.com')).to.equal(true);
    expect(lists.isDisposable('example.org')).to.equal(false);
    expect(lists.isDisposable('gmail.com')).to.equal(false);
  });

  it('takes an operator file of additions and !exceptions, with # comments', function () {
    const file = join(tempDir('posthorn-lists-'), 'disposable.txt');
    writeFileSync(
      file,
      '# ours\nthrowaway.example  # a partner’s test domain\n!mailinator.com\n\n  Burner.Example\nburner.example\n!corp.burner.example\n',
    );
    const own = loadAddressLists({ disposableFile: file });
    // an exception of a subdomain holds while its parent stays listed
    expect(own.isDisposable('corp.burner.example')).to.equal(false);
    expect(own.isDisposable('mx.corp.burner.example')).to.equal(false);
    expect(own.isDisposable('other.burner.example')).to.equal(true);
    expect(own.isDisposable('throwaway.example')).to.equal(true);
    expect(own.isDisposable('burner.example')).to.equal(true);
    expect(own.isDisposable('mailinator.com')).to.equal(false);
    expect(own.isDisposable('guerrillamail.com')).to.equal(true);
  });

  it('reads role accounts case-blind and past a +tag, RFC 2142’s included, but not first names or words people use', function () {
    for (const local of ['postmaster', 'abuse', 'hostmaster', 'noc', 'Sales', 'support+eu', 'info', 'webmaster'])
      expect(lists.isRole(local), local).to.equal(true);
    for (const local of ['jane', 'test', 'hello', 'me', 'john.doe']) expect(lists.isRole(local), local).to.equal(false);
  });

  it('knows free providers, never a disposable domain among them', function () {
    for (const d of ['gmail.com', 'yahoo.com', 'outlook.com', 'proton.me', 'gmx.de'])
      expect(lists.isFreeProvider(d), d).to.equal(true);
    expect(lists.isFreeProvider('example.org')).to.equal(false);
    expect(lists.isFreeProvider('mailinator.com')).to.equal(false);
  });
});

describe('typo suggestions', function () {
  it('corrects popular mailbox domains and common TLDs', function () {
    const cases: Record<string, string> = {
      'gmial.com': 'gmail.com',
      'hotmial.com': 'hotmail.com',
      'gmail.con': 'gmail.com',
      'yaho.com': 'yahoo.com',
      'gmial.con': 'gmail.com',
      'outlok.com': 'outlook.com',
      'example.cmo': 'example.com',
      'shop.nte': 'shop.net',
    };
    for (const [typo, meant] of Object.entries(cases)) expect(suggestDomain(typo), typo).to.equal(meant);
  });

  it('leaves popular domains, short unrelated ones and ordinary TLDs alone', function () {
    for (const d of ['gmail.com', 'gmx.com', 'web.de', 'example.org', 'company.io', 'mail.example.co.uk'])
      expect(suggestDomain(d), d).to.equal(null);
  });
});
