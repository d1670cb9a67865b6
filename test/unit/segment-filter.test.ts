import { expect } from 'chai';
import { compileFilter, contactValues, matches } from '../../src/modules/audience/segments/segment-filter.js';
import type { ContactProperty } from '../../src/modules/audience/contacts/contact-properties.js';

const prop = (
  key: string,
  type: ContactProperty['type'],
  fallback: ContactProperty['fallback'] = null,
): ContactProperty => ({ projectId: 'prj_a', key, type, fallback, createdAt: 0 });
const PROPS = [
  prop('plan', 'string', 'free'),
  prop('seats', 'number'),
  prop('signup_date', 'date'),
  prop('vip', 'boolean', false),
];
const contact = (
  email: string,
  properties: Record<string, string | number | boolean>,
  over: Partial<{ firstName: string | null; createdAt: number }> = {},
) => ({
  email,
  firstName: over.firstName ?? null,
  lastName: null,
  createdAt: over.createdAt ?? Date.UTC(2026, 0, 1),
  properties,
});

const ann = contact(
  'ann@shop.example',
  { plan: 'pro', seats: 12, signup_date: '2026-03-01', vip: true },
  { firstName: 'Ann' },
);
const bob = contact('bob@other.example', { plan: 'team', seats: 3, signup_date: '2025-12-24' });
const cid = contact('cid@shop.example', {}, { createdAt: Date.UTC(2026, 5, 1) });

describe('segment filters (pure): the condition language of templates over contacts', function () {
  const cases: Array<[string, string[]]> = [
    ["plan == 'pro'", ['ann']],
    ["plan == 'free'", ['cid']], // the fallback of a contact without a value
    ["plan != 'pro'", ['bob', 'cid']],
    ['seats >= 10', ['ann']],
    ['seats < 10', ['bob']], // no value compares as nothing
    ["signup_date >= '2026-01-01'", ['ann']],
    ["plan == 'pro' and signup_date >= '2026-01-01'", ['ann']],
    ["plan == 'team' or vip", ['ann', 'bob']],
    ['!vip', ['bob', 'cid']],
    ['first_name', ['ann']],
    ["created_at >= '2026-05-01'", ['cid']],
    ["email == 'bob@other.example'", ['bob']],
  ];
  for (const [filter, want] of cases) {
    it(`${filter} → ${want.join(', ')}`, function () {
      const compiled = compileFilter(filter, PROPS);
      if (!compiled.ok) throw new Error(compiled.message);
      const got = Object.entries({ ann, bob, cid })
        .filter(([, c]) => matches(compiled.compiled, contactValues(c, PROPS)))
        .map(([n]) => n);
      expect(got).to.deep.equal(want);
    });
  }

  it('says where a filter is wrong, with line and column, and names what it reads', function () {
    const unknown = compileFilter("plan == 'pro' and colour == 'red'", PROPS);
    expect(unknown.ok).to.equal(false);
    if (!unknown.ok) expect(unknown.message).to.match(/^filter line 1, column 19: .*colour/);
    const broken = compileFilter('plan ==\n  and seats', PROPS);
    expect(broken.ok).to.equal(false);
    if (!broken.ok) expect(broken.message).to.match(/^filter line \d+, column \d+: /);
    const ok = compileFilter("vip or seats > 2 and plan == 'pro'", PROPS);
    expect(ok.ok).to.equal(true);
    if (ok.ok) expect(ok.roots).to.deep.equal(['plan', 'seats', 'vip']);
  });
});
