import { expect } from 'chai';
import { importColumns, importRow } from '../../src/modules/audience/contacts/contact-import.js';
import type { ContactProperty } from '../../src/modules/audience/contacts/contact-properties.js';

const prop = (key: string, type: ContactProperty['type']): ContactProperty => ({
  projectId: 'prj_a',
  key,
  type,
  fallback: null,
  createdAt: 0,
});
const declared = new Map(
  [prop('plan', 'string'), prop('seats', 'number'), prop('vip', 'boolean'), prop('renewal', 'date')].map((p) => [
    p.key,
    p,
  ]),
);

describe('contact import rows (pure)', function () {
  it('maps the header to fields and declared properties, case-insensitively, and refuses a file it cannot read whole', function () {
    const ok = importColumns(['Email', ' first_name', 'PLAN', 'seats'], declared);
    expect(ok.ok).to.equal(true);
    expect(importColumns(['first_name'], declared)).to.deep.equal({
      ok: false,
      message: 'the header row has no email column',
    });
    const unknown = importColumns(['email', 'colour'], declared);
    expect(unknown.ok).to.equal(false);
    if (!unknown.ok) expect(unknown.message).to.include('colour').and.include('plan, seats, vip, renewal');
    expect(importColumns(['email', 'plan', 'Plan'], declared)).to.deep.equal({
      ok: false,
      message: 'the column plan is given twice',
    });
  });

  it('reads each row with its types; an empty cell sets nothing; a wrong row says why', function () {
    const cols = importColumns(['email', 'first_name', 'unsubscribed', 'plan', 'seats', 'vip', 'renewal'], declared);
    if (!cols.ok) throw new Error(cols.message);
    const c = cols.columns;
    expect(importRow(['Ann <ANN@X.example>', 'Ann', 'no', 'pro', ' 12 ', 'Yes', '2026-04-01'], c)).to.deep.equal({
      ok: true,
      row: {
        email: 'ann@x.example',
        first_name: 'Ann',
        unsubscribed: false,
        properties: { plan: 'pro', seats: 12, vip: true, renewal: '2026-04-01' },
      },
    });
    expect(importRow(['bob@x.example', '', '', '', '', '', ''], c)).to.deep.equal({
      ok: true,
      row: { email: 'bob@x.example', properties: {} },
    });
    const refused = (fields: string[]) => {
      const r = importRow(fields, c);
      return r.ok ? 'accepted' : r.reason;
    };
    expect(refused(['not an address', '', '', '', '', '', ''])).to.match(/^email /);
    expect(refused(['', '', '', '', '', '', ''])).to.match(/^email /);
    expect(refused(['c@x.example', '', '', '', 'many', '', ''])).to.equal('seats must be a number');
    expect(refused(['c@x.example', '', '', '', '', 'maybe', ''])).to.equal('vip must be true or false');
    expect(refused(['c@x.example', '', 'perhaps', '', '', '', ''])).to.equal('unsubscribed must be true or false');
    expect(refused(['c@x.example', '', '', '', '', '', '2026-02-30'])).to.match(/^renewal must be a date/);
    expect(refused(['c@x.example', 'x'])).to.equal('has 2 fields, the header has 7');
  });
});
