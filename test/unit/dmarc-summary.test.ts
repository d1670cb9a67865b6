import { expect } from 'chai';
import { dmarcTotals, isOwn, summarize, type SummaryRow } from '../../src/modules/receiving/dmarc/dmarc-summary.js';
import { computeInsights, type InsightSetup } from '../../src/modules/deliverability/domains/insights.js';

const DAY = 86_400_000;
const own = { domain: 'shop.example', ips: new Set(['192.0.2.1']), selectors: ['ph1', 'ph2', 'ph3'] };
const row = (over: Partial<SummaryRow>): SummaryRow => ({
  orgName: 'google.com',
  reportId: 'r1',
  begin: 0,
  end: DAY,
  sourceIp: '192.0.2.1',
  count: 1,
  disposition: 'none',
  dkimEval: 'pass',
  spfEval: 'pass',
  headerFrom: 'shop.example',
  dkim: [],
  ...over,
});
const zero = {
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
const setup = (dmarc: InsightSetup['dmarc']): InsightSetup => ({
  dkim: 'verified',
  spf_return_path: 'aligned',
  dmarc,
  tracking: { opens: false, clicks: false },
});
const codes = (rows: SummaryRow[], policy: InsightSetup['dmarc'], days = 30) =>
  computeInsights(
    'shop.example',
    days,
    { transactional: zero, broadcast: zero },
    setup(policy),
    undefined,
    dmarcTotals(summarize(rows, own)),
  ).recommendations.map((r) => r.code);

describe('DMARC report summary (pure)', function () {
  it("tells this appliance's mail by its IPs, or by a passing DKIM signature of the domain with one of its selectors", function () {
    expect(isOwn(row({}), own)).to.equal(true);
    expect(
      isOwn(row({ sourceIp: '203.0.113.9', dkim: [{ domain: 'Shop.Example', selector: 'PH2', result: 'pass' }] }), own),
    ).to.equal(true);
    expect(
      isOwn(row({ sourceIp: '203.0.113.9', dkim: [{ domain: 'shop.example', selector: 'ph2', result: 'fail' }] }), own),
    ).to.equal(false);
    expect(
      isOwn(
        row({ sourceIp: '203.0.113.9', dkim: [{ domain: 'shop.example', selector: 'google', result: 'pass' }] }),
        own,
      ),
    ).to.equal(false);
    expect(
      isOwn(
        row({ sourceIp: '203.0.113.9', dkim: [{ domain: 'other.example', selector: 'ph1', result: 'pass' }] }),
        own,
      ),
    ).to.equal(false);
  });

  it('counts reports once per reporter and id, sums by reporter and source, biggest first, and lists the sources that are not this appliance', function () {
    const s = summarize(
      [
        row({ count: 6 }),
        row({ reportId: 'r2', count: 2, spfEval: 'fail' }),
        row({
          orgName: 'yahoo.com',
          reportId: 'r1',
          sourceIp: '198.51.100.4',
          count: 3,
          dkimEval: 'fail',
          spfEval: 'fail',
          disposition: 'reject',
        }),
      ],
      own,
    );
    expect(s).to.include({ reports: 3, messages: 11 });
    expect(s.rates).to.deep.equal({ dkim_aligned: 8 / 11, spf_aligned: 6 / 11, dmarc_pass: 8 / 11 });
    expect(s.dispositions).to.deep.equal({ none: 8, quarantine: 0, reject: 3 });
    expect(s.reporters.map((r) => [r.org_name, r.reports, r.messages])).to.deep.equal([
      ['google.com', 2, 8],
      ['yahoo.com', 1, 3],
    ]);
    expect(s.unknown_senders.map((u) => [u.source_ip, u.messages])).to.deep.equal([['198.51.100.4', 3]]);
    expect(s.this_appliance.messages).to.equal(8);
  });

  it('recommends: alignment failing for the appliance’s own mail, unknown senders, and enforcement after 28 days at 99%', function () {
    const ownFailing = [row({ count: 90 }), row({ count: 10, dkimEval: 'fail', spfEval: 'fail' })];
    expect(codes(ownFailing, 'monitoring')).to.include('dmarc_alignment_failing');
    expect(
      codes([row({ count: 9, dkimEval: 'fail', spfEval: 'fail' })], 'monitoring'),
      'fewer than 10 messages say nothing',
    ).to.not.include('dmarc_alignment_failing');
    expect(codes([row({ count: 5 }), row({ sourceIp: '198.51.100.4' })], 'monitoring')).to.include('unknown_senders');

    const month = [
      row({ count: 990, begin: 0, end: DAY }),
      row({ reportId: 'r2', count: 10, begin: 28 * DAY, end: 29 * DAY, dkimEval: 'fail', spfEval: 'pass' }),
    ];
    expect(codes(month, 'monitoring')).to.include('ready_for_enforcement');
    expect(codes(month, 'enforced'), 'already enforced').to.not.include('ready_for_enforcement');
    expect(codes(month, 'monitoring', 7), 'a week is too short a window').to.not.include('ready_for_enforcement');
    const short = [
      row({ count: 990, begin: 0, end: DAY }),
      row({ reportId: 'r2', count: 10, begin: 20 * DAY, end: 21 * DAY }),
    ];
    expect(codes(short, 'monitoring'), 'reports covering 21 days').to.not.include('ready_for_enforcement');
    const leaky = [
      row({ count: 980, begin: 0, end: DAY }),
      row({ reportId: 'r2', count: 20, begin: 28 * DAY, end: 29 * DAY, dkimEval: 'fail', spfEval: 'fail' }),
    ];
    expect(codes(leaky, 'monitoring'), '98% passing').to.not.include('ready_for_enforcement');
  });

  it('says nothing without reports', function () {
    expect(codes([], 'monitoring')).to.not.include.members([
      'unknown_senders',
      'dmarc_alignment_failing',
      'ready_for_enforcement',
    ]);
  });
});
