import { expect } from 'chai';
import { MAX_QUERY, searchTerms } from '../../src/dashboard/pages/search-terms.js';

describe('dashboard search: what a query names', function () {
  const id = 'msg_01jd0m9v3y8k2q4w6e8r0t2y4u';

  it('an email id, in any case, names that email', function () {
    expect(searchTerms(` ${id} `)).to.include({ emailId: id, recipient: null, tag: null });
    expect(searchTerms(id.toUpperCase().replace('MSG_', 'msg_')).emailId).to.equal(id);
  });

  it('a Message-ID Posthorn gave (with or without its angle brackets) names the email it was given to', function () {
    expect(searchTerms(`<${id.slice(4)}@mail.example.com>`).emailId).to.equal(id);
    expect(searchTerms(`${id.slice(4)}@mail.example.com`).emailId).to.equal(id);
  });

  it('an address names a recipient, not an email', function () {
    expect(searchTerms('Ada@Example.com')).to.include({ emailId: null, recipient: 'Ada@Example.com', tag: null });
    // a local part of 26 characters that are not all [0-9a-z] is an address
    expect(searchTerms('someone.with.a.long.name_x@example.com').recipient).to.equal(
      'someone.with.a.long.name_x@example.com',
    );
  });

  it('name:value names a tag; a word or a domain names neither', function () {
    expect(searchTerms('kind:receipt')).to.include({ tag: 'kind:receipt', recipient: null, emailId: null });
    expect(searchTerms('example.com')).to.include({ tag: null, recipient: null, emailId: null, words: 'example.com' });
    expect(searchTerms('kind:')).to.include({ tag: null });
  });

  it('is cut at 320 characters and lower-cased for the lists matched by substring', function () {
    const t = searchTerms('A'.repeat(1000));
    expect(t.q).to.have.length(MAX_QUERY);
    expect(t.words).to.equal('a'.repeat(MAX_QUERY));
  });
});
