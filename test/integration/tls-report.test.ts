import { expect } from 'chai';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { simpleParser } from 'mailparser';
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import type { Tenant } from '../helpers/api.js';
import { DATABASE_KINDS } from '../helpers/databases.js';
import { makeCertificates } from '../helpers/https-receiver.js';
import { dkimResults, startLiveWorld, verifiedDomain, waitEmail, type LiveWorld } from '../helpers/live.js';
import { tlsReportSchema } from '../fixtures/tls-report-schema.js';
import type { Config } from '../../src/config/config.js';
import { addTlsRptCounts } from '../../src/modules/deliverability/tls-policy/tls-rpt.repo.js';
import { tlsReportJob } from '../../src/queue-roles.js';

// The daily TLS reports (RFC 8460 §5) as the policy domains receive them: yesterday's counts are
// stored as the MTA stores them, the tls_report job runs, and the reports arrive at an HTTPS
// endpoint on loopback (a private CA that outbound.ca_file trusts) or, for mailto:, at the SMTP
// sink as a live email of the project whose verified domain outbound.tls_rpt.from is on.

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;
const DAY_MS = 86_400_000;
const HOSTNAME = 'mta.tlsrpt.test';
const FROM_DOMAIN = 'reports.send.test';
const REPORT_HOST = 'reports.hooks.test';

interface Post {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** The policy domains' report endpoint: /fail/ answers 500, /flaky/ 503 the first time, anything else 200. */
async function startReportEndpoint(): Promise<{ posts: Post[]; caFile: string; port: number; stop(): Promise<void> }> {
  const certs = makeCertificates();
  const posts: Post[] = [];
  const server: Server = createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const earlier = posts.filter((p) => p.path === path).length;
      posts.push({ path, headers: req.headers, body: Buffer.concat(chunks) });
      const status = path.startsWith('/fail/') ? 500 : path.startsWith('/flaky/') && earlier === 0 ? 503 : 200;
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    posts,
    caFile: certs.caFile,
    port: (server.address() as AddressInfo).port,
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      rmSync(certs.dir, { recursive: true, force: true });
    },
  };
}

for (const kind of DATABASE_KINDS) {
  describe(`TLS reports sent by the tls_report job [${kind}]${kind === 'pg' ? ' @pg' : ''}`, function () {
    this.timeout(60_000);
    const ajv = new Ajv({ allErrors: true, strict: true });
    addFormats(ajv);
    const validate = ajv.compile(tlsReportSchema);
    const yesterday = Math.floor(Date.now() / DAY_MS) - 1;
    const start = new Date(yesterday * DAY_MS);
    const end = new Date((yesterday + 1) * DAY_MS);
    let w: LiveWorld;
    let t: Tenant;
    let endpoint: Awaited<ReturnType<typeof startReportEndpoint>>;
    /** the appliance's clock runs this far ahead (the next day's run) */
    let offset = 0;

    before(async function () {
      endpoint = await startReportEndpoint();
      w = await startLiveWorld(
        'dkim.tlsrpt.test',
        HOSTNAME,
        {
          outbound: {
            ca_file: endpoint.caFile,
            tls_rpt: { from: `tls-reports@${FROM_DOMAIN}`, contact_info: 'tls-team@reports.example' },
          },
          network: { allow_private: true },
        },
        {},
        kind,
        { now: () => Date.now() + offset },
      );
      w.world.add(REPORT_HOST, 'A', '127.0.0.1');
      t = await w.api.tenant({ mode: 'live' });
      await verifiedDomain(t, w.world, { domain: FROM_DOMAIN });
    });
    after(async function () {
      await w?.stop();
      await endpoint?.stop();
    });

    const url = (path: string) => `https://${REPORT_HOST}:${endpoint.port}${path}`;
    const run = (config: Config = w.api.config) => tlsReportJob(config, w.api.core).run();
    const postsTo = (path: string) => endpoint.posts.filter((p) => p.path === path);
    /** a day's sessions (yesterday unless told) to `domain` under an MTA-STS policy, as the MTA's counter stores them */
    const countSessions = (domain: string, success: number, expired = 0, day = yesterday) =>
      addTlsRptCounts(w.db.store.knex, [
        ...[['success', success] as const, ['certificate-expired', expired] as const]
          .filter(([, n]) => n > 0)
          .map(([resultType, count]) => ({
            policyDomain: domain,
            day,
            policyType: 'sts' as const,
            resultType,
            mxHost: `mx.${domain}`,
            sendingIp: '127.0.0.1',
            receivingIp: '127.0.0.2',
            policyString: ['version: STSv1', 'mode: enforce', `mx: mx.${domain}`, 'max_age: 86400'],
            count,
          })),
      ]);
    const publish = (domain: string, rua: string) =>
      w.world.add(`_smtp._tls.${domain}`, 'TXT', `v=TLSRPTv1; rua=${rua}`);
    const reportIn = (gzipped: Buffer) => {
      const report = JSON.parse(gunzipSync(gzipped).toString('utf8'));
      expect(validate(report), JSON.stringify(validate.errors)).to.equal(true);
      return report;
    };
    const reportMails = async () =>
      (await t.api.get('/v1/emails?tag=posthorn:tls_report&limit=100')).body.data as Array<any>;

    it("POSTs yesterday's report, gzipped, once to an https: rua: RFC 8460 JSON with the day's counts", async function () {
      await countSessions('alpha.tlsrpt.test', 12, 3);
      await countSessions('nothing.tlsrpt.test', 5);
      publish('alpha.tlsrpt.test', url('/alpha'));
      const said = await run();
      expect(said).to.match(/^1 TLS report\(s\) sent \(1 by HTTPS, 0 by mail\), 0 failed/);
      expect(said).to.include('1 policy domain(s) without a _smtp._tls record');
      const [post, ...more] = postsTo('/alpha');
      expect(more).to.have.length(0);
      expect(post.headers['content-type']).to.equal('application/tlsrpt+gzip');
      const report = reportIn(post.body);
      expect(report['organization-name']).to.equal(HOSTNAME);
      expect(report['contact-info']).to.equal('tls-team@reports.example');
      // the report-id names the submitter (outbound.hostname), whatever domain the contact is at
      expect(report['report-id']).to.match(new RegExp(`@${HOSTNAME.replace(/\./g, '\\.')}$`));
      expect(report['date-range']).to.deep.equal({
        'start-datetime': start.toISOString().replace('.000', ''),
        'end-datetime': end.toISOString().replace('.000', ''),
      });
      expect(report.policies).to.have.length(1);
      expect(report.policies[0].policy).to.include({ 'policy-type': 'sts', 'policy-domain': 'alpha.tlsrpt.test' });
      expect(report.policies[0].summary).to.deep.equal({
        'total-successful-session-count': 12,
        'total-failure-session-count': 3,
      });
      expect(report.policies[0]['failure-details']).to.deep.equal([
        {
          'result-type': 'certificate-expired',
          'sending-mta-ip': '127.0.0.1',
          'receiving-mx-hostname': 'mx.alpha.tlsrpt.test',
          'receiving-ip': '127.0.0.2',
          'failed-session-count': 3,
        },
      ]);
    });

    it("mails the report to a mailto: rua as a live, DKIM-signed email of the From domain's project", async function () {
      await countSessions('bravo.tlsrpt.test', 7);
      publish('bravo.tlsrpt.test', 'mailto:tlsrpt@ok.test');
      expect(await run()).to.match(/^1 TLS report\(s\) sent \(0 by HTTPS, 1 by mail\), 0 failed/);
      const m = await w.sink.waitForMessage('tlsrpt@ok.test');
      const parsed = await simpleParser(m.raw);
      expect(parsed.headers.get('tls-report-domain')).to.equal('bravo.tlsrpt.test');
      expect(parsed.headers.get('tls-report-submitter')).to.equal(HOSTNAME);
      expect(parsed.subject).to.match(
        /^Report Domain: bravo\.tlsrpt\.test Submitter: mta\.tlsrpt\.test Report-ID: <.+@mta\.tlsrpt\.test>$/,
      );
      expect(parsed.from?.value[0].address).to.equal(`tls-reports@${FROM_DOMAIN}`);
      // §5.3: a multipart/report of report-type tlsrpt, its human-readable part first
      const type = parsed.headers.get('content-type') as { value: string; params: Record<string, string> };
      expect(type).to.deep.include({ value: 'multipart/report' });
      expect(type.params['report-type']).to.equal('tlsrpt');
      expect(parsed.text).to.match(/^This is an aggregate SMTP TLS report \(RFC 8460\)/);
      const [attachment, ...others] = parsed.attachments;
      expect(others).to.have.length(0);
      expect(attachment.contentType).to.equal('application/tlsrpt+gzip');
      const seconds = (d: Date) => d.getTime() / 1000;
      expect(attachment.filename).to.equal(`${HOSTNAME}!bravo.tlsrpt.test!${seconds(start)}!${seconds(end)}.json.gz`);
      expect(reportIn(attachment.content).policies[0].summary['total-successful-session-count']).to.equal(7);
      expect(await dkimResults(w.world, m.raw)).to.deep.equal([`${FROM_DOMAIN}:pass`]);
      // the project sees it among its emails, delivered
      const [mail] = await reportMails();
      expect(mail.to).to.deep.equal(['tlsrpt@ok.test']);
      await waitEmail(t.api, mail.id, (e) => e.recipients[0].status === 'delivered');
    });

    it('sends nothing when the job runs again, nor when two nodes run it at once', async function () {
      const before = endpoint.posts.length;
      expect(await run()).to.match(/^0 TLS report\(s\) sent/);
      await countSessions('golf.tlsrpt.test', 2);
      publish('golf.tlsrpt.test', url('/golf'));
      await Promise.all([run(), run()]);
      expect(postsTo('/golf')).to.have.length(1);
      expect(endpoint.posts).to.have.length(before + 1);
      expect(await reportMails()).to.have.length(1);
      expect(w.sink.messagesTo('tlsrpt@ok.test')).to.have.length(1);
    });

    it('sends nothing to a domain whose _smtp._tls record is not a TLSRPTv1 one', async function () {
      await countSessions('charlie.tlsrpt.test', 4);
      w.world.add('_smtp._tls.charlie.tlsrpt.test', 'TXT', `v=TLSRPTv2; rua=${url('/charlie')}`);
      expect(await run()).to.include('2 policy domain(s) without a _smtp._tls record');
      expect(postsTo('/charlie')).to.have.length(0);
    });

    it('without outbound.tls_rpt.from skips mailto: (sent by a later run that has one) and still POSTs to https:', async function () {
      await countSessions('delta.tlsrpt.test', 9);
      publish('delta.tlsrpt.test', `mailto:tlsrpt@ok2.test,${url('/delta')}`);
      const config = w.api.config;
      const noFrom = { ...config, outbound: { ...config.outbound, tlsRpt: { ...config.outbound.tlsRpt, from: null } } };
      const said = await run(noFrom);
      expect(said).to.match(/^1 TLS report\(s\) sent \(1 by HTTPS, 0 by mail\)/);
      expect(said).to.include('1 to mailto: skipped: outbound.tls_rpt.from is not set');
      expect(postsTo('/delta')).to.have.length(1);
      expect(await reportMails()).to.have.length(1);
      expect(await run()).to.match(/^1 TLS report\(s\) sent \(0 by HTTPS, 1 by mail\)/);
      expect(postsTo('/delta')).to.have.length(1);
      const parsed = await simpleParser((await w.sink.waitForMessage('tlsrpt@ok2.test')).raw);
      expect(parsed.headers.get('tls-report-domain')).to.equal('delta.tlsrpt.test');
    });

    it('tries a failed POST once more at the next run, then gives it up', async function () {
      await countSessions('echo.tlsrpt.test', 1);
      await countSessions('foxtrot.tlsrpt.test', 1);
      publish('echo.tlsrpt.test', url('/fail/echo'));
      publish('foxtrot.tlsrpt.test', url('/flaky/foxtrot'));
      expect(await run()).to.match(/^0 TLS report\(s\) sent \(0 by HTTPS, 0 by mail\), 2 failed/);
      expect(await run()).to.match(/^1 TLS report\(s\) sent \(1 by HTTPS, 0 by mail\), 1 failed/);
      expect(await run()).to.match(/^0 TLS report\(s\) sent \(0 by HTTPS, 0 by mail\), 0 failed/);
      expect(postsTo('/fail/echo')).to.have.length(2);
      expect(postsTo('/flaky/foxtrot')).to.have.length(2);
    });

    it("makes up the day before's failed delivery in the next day's run, and deletes counts older than 30 days", async function () {
      await countSessions('hotel.tlsrpt.test', 6);
      publish('hotel.tlsrpt.test', url('/flaky/hotel'));
      await countSessions('juliett.tlsrpt.test', 1, 0, yesterday - 40);
      publish('juliett.tlsrpt.test', url('/juliett'));
      const said = await run();
      expect(said).to.match(/^0 TLS report\(s\) sent \(0 by HTTPS, 0 by mail\), 1 failed/);
      expect(said).to.match(/; 1 old TLS-RPT row\(s\) deleted$/);
      offset = DAY_MS;
      expect(await run()).to.match(/^1 TLS report\(s\) sent \(1 by HTTPS, 0 by mail\), 0 failed/);
      const [, second] = postsTo('/flaky/hotel');
      expect(reportIn(second.body)['date-range']['start-datetime']).to.equal(start.toISOString().replace('.000', ''));
      expect(postsTo('/juliett')).to.have.length(0);
      // every report of the day before went out once: nothing more
      expect(await run()).to.match(/^0 TLS report\(s\) sent \(0 by HTTPS, 0 by mail\), 0 failed/);
    });
  });
}
