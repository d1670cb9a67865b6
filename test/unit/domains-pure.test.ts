import { expect } from 'chai';
import { normalizeDomainName } from '../../src/modules/deliverability/domains/domain-name.js';
import {
  nextStatus,
  PENDING_GIVE_UP_MS,
  type DomainStatus,
} from '../../src/modules/deliverability/domains/domain-state.js';
import {
  computeInsights,
  insightSetup,
  type InsightCounts,
  type InsightSetup,
} from '../../src/modules/deliverability/domains/insights.js';
import { applyCheck, stillCurrent } from '../../src/modules/deliverability/domains/verification.js';
import { expectedRecords } from '../../src/modules/deliverability/domains/records.js';
import type { Domain, StoredCheck } from '../../src/modules/deliverability/domains/domains.repo.js';
import { dmarcPolicy, type RecordCheck } from '../../src/dns/checks.js';

const NONE: InsightCounts = {
  messages: 0,
  sent: 0,
  delivered: 0,
  bounced: 0,
  complained: 0,
  failed: 0,
  suppressed: 0,
  opened: 0,
  clicked: 0,
};
/** Counts of transactional mail alone. */
const tx = (c: InsightCounts) => ({ transactional: c, broadcast: NONE });

describe('normalizeDomainName', function () {
  const ok = (input: string, name: string) =>
    it(`takes ${JSON.stringify(input)} as ${name}`, () =>
      expect(normalizeDomainName(input)).to.deep.include({ ok: true, name }));
  const bad = (input: string, reason: RegExp) =>
    it(`refuses ${JSON.stringify(input).slice(0, 40)}`, () => {
      const r = normalizeDomainName(input);
      expect(r.ok).to.equal(false);
      if (!r.ok) expect(r.reason).to.match(reason);
    });
  ok('Example.COM', 'example.com');
  ok('example.com.', 'example.com');
  ok(' mail.example.co.uk ', 'mail.example.co.uk');
  ok('bücher.de', 'xn--bcher-kva.de');
  ok('xn--bcher-kva.de', 'xn--bcher-kva.de');
  ok('a-b.c0.example', 'a-b.c0.example');
  bad('', /empty/);
  bad('example', /two labels/);
  bad('10.0.0.1', /IP address/);
  bad('[::1]', /bare domain|IP address/);
  bad('user@example.com', /bare domain/);
  bad('example.com:25', /bare domain/);
  bad('ex ample.com', /bare domain/);
  bad('a_b.example.com', /invalid/);
  bad('-a.example.com', /invalid label/);
  bad('a-.example.com', /invalid label/);
  bad(`${'x'.repeat(64)}.com`, /invalid label/);
  bad(`${'abcd.'.repeat(51)}com`, /253/);
  bad('example.123', /not numeric|not a valid/);
});

describe('domain status transitions (LIFECYCLE Domain)', function () {
  const found = { allRequiredFound: true, inconclusive: false };
  const missing = { allRequiredFound: false, inconclusive: false };
  const unsure = { allRequiredFound: false, inconclusive: true };
  const cases: Array<[DomainStatus, typeof found, number, DomainStatus]> = [
    ['pending', found, 0, 'verified'],
    ['pending', missing, 1000, 'pending'],
    ['pending', missing, PENDING_GIVE_UP_MS, 'failed'],
    ['verified', missing, PENDING_GIVE_UP_MS * 10, 'temporary_failure'],
    ['verified', unsure, 0, 'verified'],
    ['temporary_failure', found, 0, 'verified'],
    ['temporary_failure', missing, 0, 'temporary_failure'],
    ['failed', found, 0, 'verified'],
    ['failed', missing, 0, 'failed'],
  ];
  for (const [from, check, age, to] of cases) {
    it(`${from} + ${check.allRequiredFound ? 'found' : check.inconclusive ? 'no DNS answer' : 'missing'}${age ? ` at ${Math.round(age / 3_600_000)} h` : ''} → ${to}`, function () {
      expect(nextStatus(from, check, age)).to.equal(to);
    });
  }
});

describe('computeInsights', function () {
  const zero: InsightCounts = {
    messages: 0,
    sent: 0,
    delivered: 0,
    bounced: 0,
    complained: 0,
    failed: 0,
    suppressed: 0,
    opened: 0,
    clicked: 0,
  };
  const good: InsightSetup = {
    dkim: 'verified',
    spf_return_path: 'aligned',
    dmarc: 'enforced',
    tracking: { opens: true, clicks: true },
  };

  it('is healthy with good setup and clean numbers', function () {
    const r = computeInsights(
      'x.test',
      30,
      tx({ ...zero, messages: 1000, sent: 1000, delivered: 1000, opened: 300, clicked: 50 }),
      good,
    );
    expect(r.status).to.equal('healthy');
    expect(r.recommendations).to.deep.equal([]);
    expect(r.rates).to.deep.equal({ delivered: 1, bounced: 0, complained: 0, opened: 0.3, clicked: 0.05 });
  });

  it('puts a complaint rate of 0.1% on watch and 0.3% at risk (Gmail and Yahoo sender rules)', function () {
    const at = (complained: number) =>
      computeInsights('x.test', 30, tx({ ...zero, delivered: 1000, complained }), good);
    expect(at(0).status).to.equal('healthy');
    expect(at(1).status).to.equal('watch');
    expect(at(1).recommendations[0]).to.include({ code: 'complaint_rate_high', level: 'warning' });
    expect(at(3).status).to.equal('at_risk');
  });

  it('puts a bounce rate of 2% on watch and 5% at risk', function () {
    const at = (bounced: number) =>
      computeInsights('x.test', 30, tx({ ...zero, delivered: 100 - bounced, bounced }), good);
    expect(at(1).status).to.equal('healthy');
    expect(at(2).recommendations.map((r) => r.code)).to.deep.equal(['bounce_rate_high']);
    expect(at(2).status).to.equal('watch');
    expect(at(5).status).to.equal('at_risk');
  });

  it('shows the two streams apart: the totals hold both, each stream its own rates (issue 27)', function () {
    const r = computeInsights(
      'x.test',
      30,
      {
        transactional: { ...zero, messages: 900, delivered: 900 },
        broadcast: { ...zero, messages: 100, delivered: 100, complained: 1 },
      },
      good,
    );
    expect(r.totals).to.include({ messages: 1000, delivered: 1000, complained: 1 });
    expect(r.streams.transactional.rates.complained).to.equal(0);
    expect(r.streams.broadcast.totals).to.include({ messages: 100, complained: 1 });
    expect(r.streams.broadcast.rates.complained).to.equal(0.01);
    // the domain's status reads the whole: 0.1% of all its mail
    expect(r.status).to.equal('watch');
  });

  it('reports null open and click rates when tracking is off', function () {
    const r = computeInsights('x.test', 30, tx({ ...zero, delivered: 10 }), {
      ...good,
      tracking: { opens: false, clicks: false },
    });
    expect(r.rates.opened).to.equal(null);
    expect(r.rates.clicked).to.equal(null);
  });

  it('asks for DKIM, return path and DMARC when they are missing', function () {
    const r = computeInsights('x.test', 30, tx(zero), {
      dkim: 'failing',
      spf_return_path: 'missing',
      dmarc: 'missing',
      tracking: { opens: false, clicks: false },
    });
    expect(r.status).to.equal('at_risk');
    expect(r.recommendations.map((x) => x.code)).to.deep.equal([
      'dkim_failing',
      'return_path_not_aligned',
      'dmarc_missing',
    ]);
  });

  it('reads the DMARC policy', function () {
    expect(dmarcPolicy('v=DMARC1; p=none;')).to.equal('none');
    expect(dmarcPolicy('v=DMARC1;p=Reject; rua=mailto:x@y')).to.equal('reject');
    expect(dmarcPolicy('v=DMARC1; sp=reject')).to.equal(null);
  });
});

describe('insightSetup (interface §2.3 setup)', function () {
  const base = { status: 'verified' as const, openTracking: true, clickTracking: true };
  const setup = (checks: Record<string, StoredCheck>, available = true) => insightSetup({ ...base, checks }, available);
  const found = (...seen: string[]): StoredCheck => ({ dns: 'found', seen });
  const missing: StoredCheck = { dns: 'missing', seen: [] };

  it('calls the return path aligned only when both its MX and its SPF record are found', function () {
    expect(
      setup({ 'return_path:mx': found('10 mta.test'), 'spf:txt': found('v=spf1 a:mta.test ~all') }).spf_return_path,
    ).to.equal('aligned');
    expect(setup({ 'return_path:mx': found('10 mta.test'), 'spf:txt': missing }).spf_return_path).to.equal('missing');
    expect(setup({ 'return_path:mx': found('10 mta.test') }).spf_return_path).to.equal('missing');
    expect(
      setup({
        'spf:txt': found('v=spf1 a:mta.test ~all'),
        'return_path:mx': { dns: 'mismatch', seen: ['10 other.test'] },
      }).spf_return_path,
    ).to.equal('missing');
  });

  it('reads the DMARC policy of the record found: none monitors, quarantine and reject enforce', function () {
    expect(setup({}).dmarc).to.equal('missing');
    expect(setup({ 'dmarc:txt': found('v=DMARC1; p=none;') }).dmarc).to.equal('monitoring');
    expect(setup({ 'dmarc:txt': found('v=DMARC1; p=quarantine') }).dmarc).to.equal('enforced');
    expect(setup({ 'dmarc:txt': found('v=DMARC1; p=reject; rua=mailto:d@x.test') }).dmarc).to.equal('enforced');
  });

  it('counts tracking as off when the platform cannot serve it, whatever the domain asks', function () {
    expect(setup({}, true).tracking).to.deep.equal({ opens: true, clicks: true });
    const off = setup({}, false);
    expect(off.tracking).to.deep.equal({ opens: false, clicks: false });
    const zero: InsightCounts = {
      messages: 1,
      sent: 1,
      delivered: 1,
      bounced: 0,
      complained: 0,
      failed: 0,
      suppressed: 0,
      opened: 1,
      clicked: 1,
    };
    const rates = computeInsights('x.test', 30, tx(zero), off).rates;
    expect(rates.opened).to.equal(null);
    expect(rates.clicked).to.equal(null);
  });
});

describe('applyCheck (a DNS check recorded)', function () {
  const records = expectedRecords({
    domain: 'x.test',
    returnPath: 'send',
    token: 'tok',
    zone: 'dkim.test',
    hostname: 'mta.test',
    publicKeys: {},
  });
  const domain = (over: Partial<Domain> = {}): Domain => ({
    id: 'dom_1',
    projectId: 'prj_1',
    name: 'x.test',
    region: null,
    status: 'pending',
    failureReason: null,
    verifiedAt: null,
    lastCheckedAt: null,
    openTracking: false,
    clickTracking: false,
    listUnsubscribe: false,
    tls: 'opportunistic',
    returnPath: 'send',
    dkimToken: 'tok',
    activeSelector: 'ph1',
    dkimActivatedAt: 0,
    checks: {},
    createdAt: 0,
    updatedAt: 0,
    ...over,
  });
  const results = (f: (key: string) => RecordCheck) => new Map(records.map((r) => [r.key, f(r.key)]));
  const timeout: RecordCheck = { dns: 'error', seen: ['lookup failed: no answer within 5000 ms'] };

  it('says the lookups failed, naming the records, and keeps the status, when DNS does not answer', function () {
    for (const status of ['pending', 'verified', 'temporary_failure', 'failed'] as const) {
      const after = applyCheck(
        domain({ status }),
        records,
        results(() => timeout),
        1000,
      );
      expect(after.status, status).to.equal(status);
    }
    const after = applyCheck(
      domain(),
      records,
      results(() => timeout),
      1000,
    );
    expect(after.failureReason).to.equal(
      'DNS lookups failed (no answer within 5000 ms), so these required records could not be checked: ph1._domainkey.x.test (CNAME), ph2._domainkey.x.test (CNAME), ph3._domainkey.x.test (CNAME)',
    );
    expect(after.checks).to.deep.equal({});
  });

  it('tells records seen missing from records that could not be checked', function () {
    const after = applyCheck(
      domain(),
      records,
      results((k) =>
        k === 'dkim:ph1' ? { dns: 'missing', seen: [] } : k.startsWith('dkim') ? timeout : { dns: 'missing', seen: [] },
      ),
      1000,
    );
    expect(after.status).to.equal('pending');
    expect(after.failureReason).to.equal(
      'required DNS records not found: ph1._domainkey.x.test (CNAME: missing); DNS lookups failed (no answer within 5000 ms), so these required records could not be checked: ph2._domainkey.x.test (CNAME), ph3._domainkey.x.test (CNAME)',
    );
  });
});

describe('stillCurrent (a check racing a PATCH of the return path)', function () {
  const records = expectedRecords({
    domain: 'x.test',
    returnPath: 'send',
    token: 'tok',
    zone: 'dkim.test',
    hostname: 'mta.test',
    publicKeys: {},
  });
  it('keeps every record while the return path is unchanged', function () {
    expect(stillCurrent(records, { returnPath: 'send' }, { returnPath: 'send' })).to.deep.equal(records);
  });
  it('drops the MX and SPF records of a return path that has moved', function () {
    expect(stillCurrent(records, { returnPath: 'send' }, { returnPath: 'mail' }).map((r) => r.key)).to.deep.equal([
      'dkim:ph1',
      'dkim:ph2',
      'dkim:ph3',
      'dmarc:txt',
    ]);
  });
});
