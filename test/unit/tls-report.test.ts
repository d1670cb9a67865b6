import { expect } from 'chai';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import {
  buildTlsReport,
  parseTlsRptTxt,
  tlsReportFilename,
  tlsReportHttpsHeaders,
  tlsReportMailHeaders,
  type TlsSessionTally,
} from '../../src/mta/tls-policy/tls-report.js';
import { tlsReportSchema } from '../fixtures/tls-report-schema.js';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

describe('SMTP TLS Reporting (RFC 8460)', function () {
  const ajv = new Ajv({ allErrors: true, strict: true });
  addFormats(ajv);
  const validate = ajv.compile(tlsReportSchema);

  const start = new Date('2016-04-01T00:00:00Z');
  const end = new Date('2016-04-02T00:00:00Z');
  const sts: TlsSessionTally = {
    policyDomain: 'company-y.example',
    policyType: 'sts',
    policyString: ['version: STSv1', 'mode: testing', 'mx: *.mail.company-y.example', 'max_age: 86400'],
    mxHosts: ['*.mail.company-y.example'],
    success: 5326,
    failures: [
      {
        resultType: 'certificate-expired',
        sendingMtaIp: '2001:db8:abcd:12::1',
        receivingMxHostname: 'mx1.mail.company-y.example',
        count: 100,
      },
      {
        resultType: 'starttls-not-supported',
        sendingMtaIp: '2001:db8:abcd:13::1',
        receivingMxHostname: 'mx2.mail.company-y.example',
        receivingIp: '203.0.113.56',
        count: 200,
        additionalInformation: 'https://reports.company-x.example/report_info?id=5065427c#StarttlsNotSupported',
      },
      {
        resultType: 'validation-failure',
        sendingMtaIp: '198.51.100.62',
        receivingMxHostname: 'mx-backup.mail.company-y.example',
        receivingIp: '203.0.113.58',
        receivingMxHelo: 'mx-backup.mail.company-y.example',
        count: 3,
        failureReasonCode: 'X509_V_ERR_PROXY_PATH_LENGTH_EXCEEDED',
      },
    ],
  };
  const tlsa: TlsSessionTally = {
    policyDomain: 'mx.company-z.example',
    policyType: 'tlsa',
    policyString: ['3 1 1 1F850A337E6DB9C609C522D136A475638CC43E1ED424F8EEC8513D747D1D085D'],
    mxHosts: [],
    success: 10,
    failures: [],
  };
  const none: TlsSessionTally = {
    policyDomain: 'plain.example',
    policyType: 'no-policy-found',
    policyString: [],
    mxHosts: [],
    success: 4,
    failures: [
      {
        resultType: 'starttls-not-supported',
        sendingMtaIp: '192.0.2.1',
        receivingMxHostname: 'mx.plain.example',
        count: 2,
      },
    ],
  };
  const report = buildTlsReport({
    organizationName: 'Company-X',
    contactInfo: 'sts-reporting@company-x.example',
    reportId: '5065427c-23d3-47ca-b6e0-946ea0e8c4be',
    start,
    end,
    policies: [sts, tlsa, none],
  });

  describe('buildTlsReport (§4.4)', function () {
    it('leaves out the addresses and host a failure before any MX was reached does not have, and stays valid', function () {
      const fetchError: TlsSessionTally = {
        policyDomain: 'unreachable-policy.example',
        policyType: 'sts',
        policyString: [],
        mxHosts: [],
        success: 0,
        failures: [{ resultType: 'sts-policy-fetch-error', sendingMtaIp: '', receivingMxHostname: '', count: 3 }],
      };
      const report = buildTlsReport({
        organizationName: 'Posthorn',
        contactInfo: 'postmaster@mta.example',
        reportId: 'r1@mta.example',
        start,
        end,
        policies: [fetchError],
      });
      expect(validate(report), JSON.stringify(validate.errors)).to.equal(true);
      expect(report.policies[0]['failure-details']).to.deep.equal([
        { 'result-type': 'sts-policy-fetch-error', 'failed-session-count': 3 },
      ]);
    });

    it('validates against the RFC 8460 schema, JSON round trip included', function () {
      const ok = validate(JSON.parse(JSON.stringify(report)));
      expect(validate.errors ?? [], JSON.stringify(validate.errors)).to.deep.equal([]);
      expect(ok).to.equal(true);
    });

    it('rejects what the RFC does not define (the schema does check)', function () {
      expect(validate({ ...report, extra: 1 })).to.equal(false);
      const policies = [{ ...report.policies[0], summary: { 'total-successful-session-count': 1 } }];
      expect(validate({ ...report, policies })).to.equal(false);
    });

    it('writes RFC 3339 UTC dates for the range', function () {
      expect(report['date-range']).to.deep.equal({
        'start-datetime': '2016-04-01T00:00:00Z',
        'end-datetime': '2016-04-02T00:00:00Z',
      });
      const odd = buildTlsReport({ ...reportArgs(), start: new Date(1500), policies: [] });
      expect(odd['date-range']['start-datetime']).to.equal('1970-01-01T00:00:01.500Z');
      expect(odd.policies).to.deep.equal([]);
    });

    it('sums the failure counts into the summary', function () {
      expect(report.policies.map((p) => p.summary)).to.deep.equal([
        { 'total-successful-session-count': 5326, 'total-failure-session-count': 303 },
        { 'total-successful-session-count': 10, 'total-failure-session-count': 0 },
        { 'total-successful-session-count': 4, 'total-failure-session-count': 2 },
      ]);
    });

    it('takes the count of failed sessions when failure types overlap (§4)', function () {
      const r = buildTlsReport({ ...reportArgs(), policies: [{ ...sts, failureSessions: 250 }] });
      expect(r.policies[0].summary['total-failure-session-count']).to.equal(250);
    });

    it('uses the exact field names, leaving out optional fields that are not known', function () {
      const p = report.policies[0];
      expect(p.policy).to.deep.equal({
        'policy-type': 'sts',
        'policy-string': sts.policyString,
        'policy-domain': 'company-y.example',
        'mx-host': ['*.mail.company-y.example'],
      });
      expect(p['failure-details'][0]).to.deep.equal({
        'result-type': 'certificate-expired',
        'sending-mta-ip': '2001:db8:abcd:12::1',
        'receiving-mx-hostname': 'mx1.mail.company-y.example',
        'failed-session-count': 100,
      });
      expect(p['failure-details'][2]).to.include({
        'receiving-mx-helo': 'mx-backup.mail.company-y.example',
        'receiving-ip': '203.0.113.58',
        'failure-reason-code': 'X509_V_ERR_PROXY_PATH_LENGTH_EXCEEDED',
      });
      expect(report.policies[2].policy).to.deep.equal({
        'policy-type': 'no-policy-found',
        'policy-domain': 'plain.example',
      });
      expect(report.policies[1]['failure-details']).to.deep.equal([]);
    });

    function reportArgs() {
      return { organizationName: 'Company-X', contactInfo: 'tlsrpt@company-x.example', reportId: 'r1', start, end };
    }
  });

  describe('parseTlsRptTxt (§3)', function () {
    const table: Array<[string, string[][], string[] | null]> = [
      ['mailto', [['v=TLSRPTv1;rua=mailto:reports@example.com']], ['mailto:reports@example.com']],
      [
        'https',
        [['v=TLSRPTv1; rua=https://reporting.example.com/v1/tlsrpt']],
        ['https://reporting.example.com/v1/tlsrpt'],
      ],
      [
        'both, with spaces around the comma',
        [['v=TLSRPTv1; rua=mailto:a@b.example , https://x.example/y']],
        ['mailto:a@b.example', 'https://x.example/y'],
      ],
      [
        'split strings joined without spaces',
        [['v=TLSRPTv1; rua=mailto:tls', 'rpt@example.com']],
        ['mailto:tlsrpt@example.com'],
      ],
      [
        'unsupported schemes dropped',
        [['v=TLSRPTv1; rua=http://x.example/,mailto:a@b.example']],
        ['mailto:a@b.example'],
      ],
      ['other records discarded', [['v=spf1 -all'], ['v=TLSRPTv1; rua=mailto:a@b.example']], ['mailto:a@b.example']],
      ['unknown fields ignored', [['v=TLSRPTv1; x-ext=1; rua=mailto:a@b.example;']], ['mailto:a@b.example']],
      ['two TLSRPT records', [['v=TLSRPTv1; rua=mailto:a@b.example'], ['v=TLSRPTv1; rua=mailto:c@d.example']], null],
      ['no record', [], null],
      ['no rua', [['v=TLSRPTv1; ruf=mailto:a@b.example']], null],
      ['only unsupported URIs', [['v=TLSRPTv1; rua=ftp://x.example/']], null],
      ['a mailto without an address', [['v=TLSRPTv1; rua=mailto:']], null],
      ['another version', [['v=TLSRPTv2; rua=mailto:a@b.example']], null],
      ['the version not first', [['rua=mailto:a@b.example; v=TLSRPTv1']], null],
    ];
    for (const [name, records, rua] of table) {
      it(`${name} → ${rua === null ? 'null' : rua.join(' ')}`, function () {
        expect(parseTlsRptTxt(records)).to.deep.equal(rua === null ? null : { rua });
      });
    }
  });

  describe('delivery (§5)', function () {
    it('names the file submitter!policy-domain!begin!end[!unique-id].json.gz (§5.1)', function () {
      const base = { receiver: 'example.net', submitter: 'mail.sndr.example.com' };
      const range = { start: new Date(1470013207 * 1000), end: new Date(1470186007 * 1000) };
      expect(tlsReportFilename({ ...base, ...range, uniqueId: '001' })).to.equal(
        'mail.sndr.example.com!example.net!1470013207!1470186007!001.json.gz',
      );
      expect(tlsReportFilename({ ...base, ...range, receiver: 'Example.NET.' })).to.equal(
        'mail.sndr.example.com!example.net!1470013207!1470186007.json.gz',
      );
      expect(tlsReportFilename({ ...base, ...range, uniqueId: 'a-1_b!', gzip: false })).to.equal(
        'mail.sndr.example.com!example.net!1470013207!1470186007!a1b.json',
      );
    });

    it('gives the mail subject, TLS-Report-* headers and media types (§5.3)', function () {
      const m = tlsReportMailHeaders({
        policyDomain: 'example.net',
        submitter: 'mail.sender.example.com',
        reportId: '735ff.e317+bf22029@mailexample.net',
        start,
        end,
      });
      expect(m.subject).to.equal(
        'Report Domain: example.net Submitter: mail.sender.example.com Report-ID: <735ff.e317+bf22029@mailexample.net>',
      );
      expect(m.headers).to.deep.equal({
        'TLS-Report-Domain': 'example.net',
        'TLS-Report-Submitter': 'mail.sender.example.com',
      });
      expect(m.contentType).to.equal('multipart/report; report-type="tlsrpt"');
      expect(m.attachment).to.deep.equal({
        contentType: 'application/tlsrpt+gzip',
        filename: `mail.sender.example.com!example.net!${start.getTime() / 1000}!${end.getTime() / 1000}.json.gz`,
      });
    });

    it('makes a report id without "@" a msg-id of the submitter', function () {
      const base = { policyDomain: 'example.net', submitter: 's.example', start, end };
      expect(tlsReportMailHeaders({ ...base, reportId: 'abc123' }).subject).to.match(
        / Report-ID: <abc123@s\.example>$/,
      );
      expect(tlsReportMailHeaders({ ...base, reportId: '<x@y>' }).subject).to.match(/ Report-ID: <x@y>$/);
    });

    it('posts over HTTPS as application/tlsrpt+gzip (§5.4)', function () {
      expect(tlsReportHttpsHeaders()).to.deep.equal({ 'Content-Type': 'application/tlsrpt+gzip' });
    });
  });
});
