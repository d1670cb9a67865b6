import { expect } from 'chai';
import { readMailbox } from '../../src/modules/deliverability/verify/syntax.js';
import { CORPUS, type AddressCase } from '../fixtures/addresses/corpus.js';

/** The domain a valid row expects: its own, or the domain as written, lower-cased. */
function expectedDomain(c: AddressCase): string {
  return c.domain ?? c.address.slice(c.address.lastIndexOf('@') + 1).toLowerCase();
}

/** What readMailbox says of a row, where that differs from the corpus; null where they agree. */
function disagreement(c: AddressCase): string | null {
  const got = readMailbox(c.address);
  if (got.ok !== c.valid)
    return got.ok ? `valid (${got.domain}), corpus says invalid` : `invalid (${got.why}), corpus says valid`;
  if (got.ok && got.domain !== expectedDomain(c)) return `domain ${got.domain}, corpus says ${expectedDomain(c)}`;
  return null;
}

// Addresses from the RFCs and published test suites (test/fixtures/addresses/README.md),
// labelled by what mail servers accept, against readMailbox.
describe('address corpus: readMailbox against RFC examples and published suites', function () {
  it('holds at least 200 distinct addresses, both valid and invalid, from several sources', function () {
    const seen = new Set<string>();
    const repeated = CORPUS.filter((c) => seen.size === seen.add(c.address).size).map((c) => JSON.stringify(c.address));
    expect(repeated, 'addresses listed twice').to.deep.equal([]);
    expect(CORPUS.length).to.be.at.least(200);
    expect(CORPUS.filter((c) => c.valid).length).to.be.at.least(60);
    expect(CORPUS.filter((c) => !c.valid).length).to.be.at.least(60);
    expect(new Set(CORPUS.map((c) => c.source)).size).to.be.at.least(5);
  });

  it('agrees with every row', function () {
    const wrong = CORPUS.flatMap((c) => {
      const d = disagreement(c);
      return d ? [`${JSON.stringify(c.address)} [${c.source}]: ${d}`] : [];
    });
    console.log(`      address corpus: ${CORPUS.length - wrong.length}/${CORPUS.length} agree`);
    expect(wrong, `${wrong.length} disagreements:\n${wrong.join('\n')}`).to.deep.equal([]);
  });
});
