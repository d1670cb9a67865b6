import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { presentReport } from '../../src/modules/receiving/bounces/report.presenter.js';
import { readReport } from '../../src/modules/receiving/bounces/report.js';

const DIR = fileURLToPath(new URL('../fixtures/bounces/', import.meta.url));

interface Expected {
  file: string;
  mta: string;
  kind: string;
  original_message_id: string | null;
  recipients: Array<{
    address: string;
    action: string | null;
    status: string | null;
    bounce_type: string | null;
    reason: string | null;
  }>;
}

/** What the corpus labels of a message, and the same fields of what the appliance reads (`posthorn inbound parse`). */
function compared(e: Expected) {
  const got = presentReport(readReport(readFileSync(DIR + e.file)));
  const pick = (r: Expected['recipients'][number]) =>
    e.kind === 'complaint'
      ? { address: r.address }
      : { address: r.address, action: r.action, status: r.status, bounce_type: r.bounce_type, reason: r.reason };
  return {
    got: { kind: got.kind, original_message_id: got.original_message_id, recipients: got.recipients.map(pick) },
    want: { kind: e.kind, original_message_id: e.original_message_id, recipients: e.recipients.map(pick) },
  };
}

// Real bounce messages of many mail systems (test/fixtures/bounces/README.md): kind, recipients,
// status, bounce_type and reason as a person reading each one labelled it.
describe('bounce corpus: real DSNs, non-standard bounces, ARF reports and auto-replies', function () {
  const expected = JSON.parse(readFileSync(DIR + 'expected.json', 'utf8')) as Expected[];
  let agreed = 0;
  after(function () {
    console.log(`      agreement with the corpus: ${agreed}/${expected.length}`);
  });

  it('labels every message in the folder, at least 80 of them from at least 20 mail systems', function () {
    const files = readdirSync(DIR)
      .filter((f) => f.endsWith('.eml'))
      .sort();
    expect(expected.map((e) => e.file).sort()).to.deep.equal(files);
    expect(files.length).to.be.at.least(80);
    expect(new Set(expected.filter((e) => e.kind === 'bounce').map((e) => e.mta)).size).to.be.at.least(20);
    for (const kind of ['complaint', 'auto_reply'])
      expect(expected.filter((e) => e.kind === kind).length, kind).to.be.at.least(5);
  });

  for (const e of expected) {
    it(`${e.file} (${e.mta}): ${e.kind}${e.recipients[0]?.reason ? ` ${e.recipients[0].bounce_type} ${e.recipients[0].reason}` : ''}`, function () {
      const { got, want } = compared(e);
      expect(got).to.deep.equal(want);
      agreed++;
    });
  }
});
