import { expect } from 'chai';
import { gunzipSync, gzipSync } from 'node:zlib';
import { prepareEmail } from '../../src/modules/sending/emails/prepare.js';
import { buildTlsReport, ruaMailbox } from '../../src/mta/tls-policy/tls-report.js';
import { tlsReportMailBody, type ReportLetter } from '../../src/mta/tls-policy/tls-report-mail.js';
import { describeTlsReportRun, type TlsReportRun } from '../../src/mta/tls-policy/tls-report-sender.js';

describe('TLS report delivery (RFC 8460 §5)', function () {
  const start = new Date('2026-11-21T00:00:00Z');
  const end = new Date('2026-11-22T00:00:00Z');
  const report = buildTlsReport({
    organizationName: 'Example Mail',
    contactInfo: 'postmaster@mta.example.net',
    reportId: '2026-11-21.example.com@mta.example.net',
    start,
    end,
    policies: [
      {
        policyDomain: 'example.com',
        policyType: 'sts',
        policyString: ['version: STSv1', 'mode: enforce', 'mx: mx.example.com', 'max_age: 86400'],
        mxHosts: ['mx.example.com'],
        success: 40,
        failures: [
          {
            resultType: 'certificate-expired',
            sendingMtaIp: '192.0.2.1',
            receivingMxHostname: 'mx.example.com',
            count: 2,
          },
        ],
      },
    ],
  });
  const letter: ReportLetter = {
    policyDomain: 'Example.COM',
    submitter: 'mta.example.net',
    report,
    gzipped: gzipSync(JSON.stringify(report)),
  };

  describe('tlsReportMailBody', function () {
    const body = tlsReportMailBody('tls-reports@send.example.net', 'tlsrpt@example.com', letter);

    it('is a send the accept takes: From, one recipient, the §5.3 header fields, no validation error', function () {
      const prepared = prepareEmail(body, Date.now());
      expect(prepared.recipients).to.deep.equal([{ address: 'tlsrpt@example.com', kind: 'to' }]);
      expect(prepared.headers).to.deep.equal({
        'TLS-Report-Domain': 'example.com',
        'TLS-Report-Submitter': 'mta.example.net',
      });
      expect(prepared.subject).to.equal(
        'Report Domain: example.com Submitter: mta.example.net Report-ID: <2026-11-21.example.com@mta.example.net>',
      );
      expect(prepared.tags).to.deep.equal({ posthorn: 'tls_report', policy_domain: 'example.com' });
    });

    it('attaches the gzipped report as application/tlsrpt+gzip under the §5.1 file name', function () {
      const [a] = prepareEmail(body, Date.now()).attachments;
      expect(a.contentType).to.equal('application/tlsrpt+gzip');
      expect(a.filename).to.equal('mta.example.net!example.com!1795219200!1795305600.json.gz');
      expect(JSON.parse(gunzipSync(a.content!).toString('utf8'))).to.deep.equal(report);
    });

    it("says in its text what the report covers: the day and the sessions' totals", function () {
      expect(body.text).to.include('mail to example.com on 2026-11-21 (UTC)');
      expect(body.text).to.include('40 successful and 2 failed TLS session(s)');
    });
  });

  describe('ruaMailbox', function () {
    it('gives the address of a mailto: URI, without its query, percent-decoded', function () {
      expect(ruaMailbox('mailto:tlsrpt@example.com')).to.equal('tlsrpt@example.com');
      expect(ruaMailbox('mailto:tls%2Brpt@example.com?subject=x')).to.equal('tls+rpt@example.com');
    });

    it('gives null for an https: URI and for a mailto: without one address', function () {
      expect(ruaMailbox('https://reports.example.com/tlsrpt')).to.equal(null);
      expect(ruaMailbox('mailto:')).to.equal(null);
      expect(ruaMailbox('mailto:a@example.com,b@example.com')).to.equal(null);
      expect(ruaMailbox('mailto:%E0%A4%A@example.com')).to.equal(null);
    });
  });

  describe('describeTlsReportRun', function () {
    const run: TlsReportRun = {
      enabled: true,
      sent: { https: 2, mail: 1 },
      failed: 1,
      noRecord: 4,
      lookupFailed: 0,
      claimedElsewhere: 0,
      mailSkipped: 0,
      mailSkippedWhy: null,
      pruned: 12,
    };

    it('says what was sent, how, what failed, and what was pruned', function () {
      expect(describeTlsReportRun(run)).to.equal(
        '3 TLS report(s) sent (2 by HTTPS, 1 by mail), 1 failed; 4 policy domain(s) without a _smtp._tls record; 12 old TLS-RPT row(s) deleted',
      );
    });

    it('says why reports to mailto: addresses were skipped', function () {
      const skipped = { ...run, mailSkipped: 2, mailSkippedWhy: 'outbound.tls_rpt.from is not set' };
      expect(describeTlsReportRun(skipped)).to.include('2 to mailto: skipped: outbound.tls_rpt.from is not set');
    });

    it('says when reports are off, and still counts the prune', function () {
      expect(describeTlsReportRun({ ...run, enabled: false })).to.equal(
        'TLS reports off (outbound.tls_rpt.enabled); 12 old TLS-RPT row(s) deleted',
      );
    });
  });
});
