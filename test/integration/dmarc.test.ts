import { expect } from 'chai';
import { gzipSync } from 'node:zlib';
import type { Tenant } from '../helpers/api.js';
import { DATABASE_KINDS } from '../helpers/databases.js';
import { startLiveWorld, verifiedDomain, type LiveWorld } from '../helpers/live.js';
import { smtpSend } from '../helpers/smtp-client.js';
import { expectError } from '../helpers/assert.js';
import { importReport } from '../../src/modules/receiving/dmarc/dmarc.service.js';
import { presentImportedReport } from '../../src/modules/receiving/dmarc/dmarc.presenter.js';

let n = 0;

/** An aggregate report as receivers write it (RFC 7489 appendix C) about `domain`, with the rows given. */
function aggregateReport(
  domain: string,
  rows: Array<{ ip: string; count: number; dkim: 'pass' | 'fail'; spf: 'pass' | 'fail'; selector?: string }>,
  org = 'google.com',
  id = `${Date.now()}${++n}`,
): string {
  const begin = Math.floor(Date.now() / 1000) - 86_400;
  const record = (r: (typeof rows)[number]) => `  <record>
    <row><source_ip>${r.ip}</source_ip><count>${r.count}</count>
      <policy_evaluated><disposition>none</disposition><dkim>${r.dkim}</dkim><spf>${r.spf}</spf></policy_evaluated></row>
    <identifiers><header_from>${domain}</header_from></identifiers>
    <auth_results>${r.selector ? `<dkim><domain>${domain}</domain><selector>${r.selector}</selector><result>${r.dkim}</result></dkim>` : ''}<spf><domain>send.${domain}</domain><result>${r.spf}</result></spf></auth_results>
  </record>`;
  return `<?xml version="1.0" encoding="UTF-8" ?>
<feedback>
  <report_metadata><org_name>${org}</org_name><email>noreply-dmarc-support@${org}</email><report_id>${id}</report_id>
    <date_range><begin>${begin}</begin><end>${begin + 86_399}</end></date_range></report_metadata>
  <policy_published><domain>${domain}</domain><adkim>r</adkim><aspf>r</aspf><p>none</p><sp>none</sp><pct>100</pct></policy_published>
${rows.map(record).join('\n')}
</feedback>
`;
}

/** The message a reporter sends: a short text and the report as a gzip attachment. */
function reportMail(to: string, domain: string, xml: string): string {
  const b = `b${++n}`;
  const gz = gzipSync(Buffer.from(xml)).toString('base64').replace(/.{76}/g, '$&\r\n');
  return [
    'From: noreply-dmarc-support@google.com',
    `To: ${to}`,
    `Subject: Report domain: ${domain} Submitter: google.com Report-ID: ${n}`,
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${b}"`,
    '',
    `--${b}`,
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'This is an aggregate report from google.com.',
    `--${b}`,
    `Content-Type: application/gzip; name="google.com!${domain}!1!2.xml.gz"`,
    'Content-Transfer-Encoding: base64',
    `Content-Disposition: attachment; filename="google.com!${domain}!1!2.xml.gz"`,
    '',
    gz,
    `--${b}--`,
    '',
  ].join('\r\n');
}

for (const kind of DATABASE_KINDS) {
  describe(`DMARC aggregate reports over SMTP (GET /v1/domains/{id}/dmarc) [${kind}]${kind === 'pg' ? ' @pg' : ''}`, function () {
    this.timeout(60_000);
    let w: LiveWorld;
    let t: Tenant;
    let port: number;
    let d: { id: string; domain: string; records: Array<{ purpose?: string; name: string; value: string }> };
    let rua: string;

    before(async function () {
      w = await startLiveWorld(
        'dkim.dmarc.test',
        'mta.dmarc.test',
        { smtp: { inbound: { host: '127.0.0.1', port: 0 }, submission: { enabled: false } } },
        { inbound: true },
        kind,
      );
      port = w.api.running.inboundPort!;
      t = await w.api.tenant({ mode: 'live' });
      d = await verifiedDomain(t, w.world);
      const record = d.records.find((r) => r.name === `_dmarc.${d.domain}`)!;
      rua = /rua=mailto:([^;]+);/.exec(record.value)![1]!;
    });
    after(async function () {
      await w.stop();
    });

    const rows = [
      { ip: '203.0.113.5', count: 90, dkim: 'pass', spf: 'pass', selector: 'ph1' },
      { ip: '203.0.113.5', count: 12, dkim: 'fail', spf: 'fail', selector: 'ph1' },
      { ip: '198.51.100.7', count: 8, dkim: 'fail', spf: 'fail' },
    ] as const;

    it('proposes the report address at the return path, takes a gzip report mailed there once, and reads the totals back', async function () {
      expect(rua).to.match(new RegExp(`^dmarc\\+[0-9a-f]{20}@send\\.${d.domain.replace(/\./g, '\\.')}$`));
      const xml = aggregateReport(d.domain, [...rows]);
      const sent = await smtpSend(port, {
        from: 'noreply-dmarc-support@google.com',
        to: [rua],
        raw: reportMail(rua, d.domain, xml),
      });
      expect(sent.ok, JSON.stringify(sent)).to.equal(true);
      // the same report again (a receiver's retry): stored once
      expect(
        (
          await smtpSend(port, {
            from: 'noreply-dmarc-support@google.com',
            to: [rua],
            raw: reportMail(rua, d.domain, xml),
          })
        ).ok,
      ).to.equal(true);

      const res = await t.api.get(`/v1/domains/${d.id}/dmarc?days=7`);
      expect(res.status, res.text).to.equal(200);
      const s = res.body;
      expect(s).to.include({
        object: 'domain_dmarc',
        domain: d.domain,
        window_days: 7,
        report_address: rua,
        reports: 1,
        messages: 110,
      });
      expect(s.rates).to.deep.equal({ dkim_aligned: 90 / 110, spf_aligned: 90 / 110, dmarc_pass: 90 / 110 });
      expect(s.reporters).to.deep.equal([{ org_name: 'google.com', reports: 1, messages: 110, rates: s.rates }]);
      expect(
        s.sources.map((x: { source_ip: string; messages: number; this_appliance: boolean }) => [
          x.source_ip,
          x.messages,
          x.this_appliance,
        ]),
      ).to.deep.equal([
        ['203.0.113.5', 102, true],
        ['198.51.100.7', 8, false],
      ]);
      expect(s.unknown_senders).to.have.length(1);
      expect(s.unknown_senders[0]).to.include({ source_ip: '198.51.100.7', messages: 8 });
      expect(s.this_appliance).to.deep.equal({
        messages: 102,
        rates: { dkim_aligned: 90 / 102, spf_aligned: 90 / 102, dmarc_pass: 90 / 102 },
      });

      const insights = (await t.api.get(`/v1/domains/${d.id}/insights`)).body;
      expect(insights.dmarc_reports).to.include({
        reports: 1,
        messages: 110,
        unknown_sources: 1,
        unknown_messages: 8,
        this_appliance_messages: 102,
      });
      const codes = insights.recommendations.map((r: { code: string }) => r.code);
      expect(codes).to.include.members(['unknown_senders', 'dmarc_alignment_failing']);
      expect(codes).to.not.include('ready_for_enforcement');
    });

    it('stores nothing of a report about another domain, refuses an unknown token at RCPT, and another project cannot read the reports', async function () {
      const before = (await t.api.get(`/v1/domains/${d.id}/dmarc`)).body.reports;
      const foreign = aggregateReport('elsewhere.example', [{ ip: '192.0.2.1', count: 5, dkim: 'pass', spf: 'pass' }]);
      expect(
        (await smtpSend(port, { from: 'r@google.com', to: [rua], raw: reportMail(rua, 'elsewhere.example', foreign) }))
          .ok,
      ).to.equal(true);
      expect((await t.api.get(`/v1/domains/${d.id}/dmarc`)).body.reports).to.equal(before);

      const wrong = rua.replace(/\+[0-9a-f]{20}@/, '+0123456789abcdef0123@');
      const refused = await smtpSend(port, {
        from: 'r@google.com',
        to: [wrong],
        raw: reportMail(wrong, d.domain, aggregateReport(d.domain, [...rows])),
      });
      expect(refused.ok).to.equal(false);
      if (!refused.ok) expect(refused.code).to.equal(550);

      const other = await w.api.tenant({ mode: 'live' });
      expectError(await other.api.get(`/v1/domains/${d.id}/dmarc`), 404, 'not_found');
      expectError(await t.api.get(`/v1/domains/${d.id}/dmarc?days=91`), 400, 'validation_error');
    });

    it('tells a domain that already publishes its own DMARC record how to add the report address to it', async function () {
      const res = (await t.api.post('/v1/domains', { domain: `own-dmarc-${kind}-${Date.now()}.send.test` })).body;
      for (const r of res.records.filter((x: { required: boolean }) => x.required))
        w.world.add(r.name, 'CNAME', r.value);
      w.world.add(`_dmarc.${res.domain}`, 'TXT', 'v=DMARC1; p=quarantine; rua=mailto:dmarc@corp.example');
      const checked = (await t.api.post(`/v1/domains/${res.id}/verify`)).body;
      const dmarc = checked.records.find((r: { purpose: string }) => r.purpose === 'dmarc');
      expect(dmarc.dns).to.equal('found');
      const address = /rua=mailto:([^;]+);/.exec(dmarc.value)![1];
      expect(dmarc.note).to.equal(
        `To receive DMARC reports here, add the address to the record's rua tag: rua=mailto:dmarc@corp.example,mailto:${address}`,
      );
      // a record that already has the address needs no note
      expect(d.records.find((r) => r.purpose === 'dmarc')).to.not.have.property('note');
    });

    it('imports a report that arrived elsewhere, once, for the registered domain it is about', async function () {
      const xml = Buffer.from(
        aggregateReport(
          d.domain,
          [{ ip: '203.0.113.9', count: 4, dkim: 'pass', spf: 'pass', selector: 'ph1' }],
          'yahoo.com',
        ),
      );
      const first = presentImportedReport(await importReport(w.api.deps, xml, 'yahoo.xml'));
      expect(first).to.include({ stored: true, domain: d.domain, org_name: 'yahoo.com', rows: 1, messages: 4 });
      expect(presentImportedReport(await importReport(w.api.deps, xml, 'yahoo.xml')).stored).to.equal(false);
      const reporters = (await t.api.get(`/v1/domains/${d.id}/dmarc`)).body.reporters.map(
        (r: { org_name: string }) => r.org_name,
      );
      expect(reporters).to.include('yahoo.com');
      await importReport(
        w.api.deps,
        Buffer.from(aggregateReport('nobody.example', [{ ip: '192.0.2.1', count: 1, dkim: 'pass', spf: 'pass' }])),
        'x.xml',
      ).then(
        () => expect.fail('a report about an unregistered domain was stored'),
        (e: Error) => expect(e.message).to.include('nobody.example'),
      );
      await importReport(w.api.deps, Buffer.from('<!DOCTYPE x [<!ENTITY a "b">]><feedback/>'), 'evil.xml').then(
        () => expect.fail('an XML with an entity was read'),
        (e: Error) => expect(e.message).to.include('unsafe_xml'),
      );
    });
  });
}
