import { expect } from 'chai';
import { simpleParser } from 'mailparser';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { join } from 'node:path';
import type { Tenant } from '../helpers/api.js';
import { DATABASE_KINDS, freshDatabase } from '../helpers/databases.js';
import {
  delayReason,
  sendReceipt,
  startLiveWorld,
  verifiedDomain,
  waitEmail,
  type LiveWorld,
} from '../helpers/live.js';
import { startSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { tempDir } from '../helpers/temp-dir.js';
import { TlsRptCounter, tlsReportsOfDay } from '../../src/mta/tls-policy/tls-rpt-counter.js';
import { addTlsRptCounts } from '../../src/modules/deliverability/tls-policy/tls-rpt.repo.js';
import { tlsReportJob } from '../../src/queue-roles.js';

// MTA-STS (RFC 8461) as a sender of mail sees it: the recipient domains publish policies on an
// HTTPS server of their own (a loopback address on port 443, as the RFC wants) with certificates
// of a private CA that outbound.ca_file trusts; their MX hosts are SMTP sinks on loopback
// addresses that offer STARTTLS, one with a certificate of that CA, one self-signed.

const POLICY_HOST = '127.0.0.51';
const GOOD_MX = '127.0.0.52';
const BAD_MX = '127.0.0.53';
const DOMAINS = ['good', 'bad', 'testing', 'nomatch', 'cache', 'keep'].map((d) => `${d}.sts.test`);

/** A private CA, the policy host's certificate, a good MX certificate, and a self-signed one. */
function makeCertificates(dir: string): void {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  const ca = ['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'];
  openssl('req', '-x509', ...key, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '30', '-subj', '/CN=STS CA', ...ca);
  const issue = (name: string, names: string[]) => {
    openssl('req', '-new', ...key, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${names[0]}`);
    writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}\n`);
    openssl(
      ...['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial'],
      ...['-days', '30', '-extfile', `${name}.ext`, '-out', `${name}.pem`],
    );
  };
  issue(
    'policy',
    DOMAINS.map((d) => `mta-sts.${d}`),
  );
  issue('mx', ['mx.good.sts.test', 'mx.nomatch.sts.test', 'mx.cache.sts.test']);
  const bad = ['mx.bad.sts.test', 'mx.testing.sts.test', 'mx.keep.sts.test'];
  openssl(
    ...['req', '-x509', ...key, '-keyout', 'self.key', '-out', 'self.pem', '-days', '30', '-subj', `/CN=${bad[0]}`],
    ...['-addext', `subjectAltName=${bad.map((n) => `DNS:${n}`).join(',')}`],
  );
}

const policyOf = (mode: string, mx: string) => `version: STSv1\nmode: ${mode}\nmx: ${mx}\nmax_age: 86400\n`;

for (const kind of DATABASE_KINDS) {
  describe(`MTA-STS in direct delivery [${kind}]${kind === 'pg' ? ' @pg' : ''}`, function () {
    this.timeout(60_000);
    let w: LiveWorld;
    let t: Tenant;
    let from: string;
    let https: Server;
    let goodSink: SmtpSink;
    let badSink: SmtpSink;
    let offset = 0;
    const fetches = new Map<string, number>();
    const failing = new Set<string>();
    const policies = new Map<string, string>([
      ['good.sts.test', policyOf('enforce', 'mx.good.sts.test')],
      ['bad.sts.test', policyOf('enforce', 'mx.bad.sts.test')],
      ['testing.sts.test', policyOf('testing', 'mx.testing.sts.test')],
      ['nomatch.sts.test', policyOf('enforce', '*.elsewhere.test')],
      ['cache.sts.test', policyOf('enforce', 'mx.cache.sts.test')],
      ['keep.sts.test', policyOf('enforce', '*.keep.sts.test')],
    ]);

    before(async function () {
      const dir = tempDir('posthorn-sts-');
      makeCertificates(dir);
      const pem = (f: string) => readFileSync(join(dir, f), 'utf8');
      https = createServer({ key: pem('policy.key'), cert: pem('policy.pem') }, (req, res) => {
        const domain = (req.headers.host ?? '').replace(/^mta-sts\./, '').replace(/:\d+$/, '');
        fetches.set(domain, (fetches.get(domain) ?? 0) + 1);
        const policy = policies.get(domain);
        if (req.url !== '/.well-known/mta-sts.txt' || !policy || failing.has(domain)) {
          res.writeHead(failing.has(domain) ? 503 : 404).end();
          return;
        }
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(policy);
      });
      await new Promise<void>((resolve) => https.listen(443, POLICY_HOST, resolve));
      w = await startLiveWorld(
        'dkim.sts.test',
        'mta.sts.test',
        { outbound: { ca_file: join(dir, 'ca.pem') }, network: { allow_private: true } },
        {},
        kind,
        { now: () => Date.now() + offset },
      );
      const sink = (host: string, name: string) =>
        startSink({
          host,
          port: w.sink.port,
          starttls: true,
          tls: { key: pem(`${name}.key`), cert: pem(`${name}.pem`) },
        });
      goodSink = await sink(GOOD_MX, 'mx');
      badSink = await sink(BAD_MX, 'self');
      for (const d of DOMAINS) {
        const mx = `mx.${d}`;
        w.world.add(d, 'MX', { exchange: mx, priority: 10 });
        w.world.add(mx, 'A', ['good', 'nomatch', 'cache'].includes(d.split('.')[0]) ? GOOD_MX : BAD_MX);
        w.world.add(`mta-sts.${d}`, 'A', POLICY_HOST);
        w.world.add(`_mta-sts.${d}`, 'TXT', 'v=STSv1; id=1');
      }
      t = await w.api.tenant({ mode: 'live' });
      from = `shop@${(await verifiedDomain(t, w.world)).domain}`;
    });
    after(async function () {
      await goodSink?.stop();
      await badSink?.stop();
      await w?.stop();
      await new Promise((resolve) => https?.close(resolve));
    });

    const send = (to: string) => sendReceipt(t.api, from, to);
    const delivered = (id: string) => waitEmail(t.api, id, (e) => e.recipients[0].status === 'delivered');
    const delayedBy = (id: string) => delayReason(t.api, id);
    const setTxtId = (domain: string, id: string) => {
      w.world.remove(`_mta-sts.${domain}`, 'TXT');
      w.world.add(`_mta-sts.${domain}`, 'TXT', `v=STSv1; id=${id}`);
    };

    it('enforce, a certificate the CA did not sign: the recipient waits, and nothing is said in plain text', async function () {
      const id = await send('ann@bad.sts.test');
      expect(await delayedBy(id)).to.match(
        /^451 4\.7\.5 MTA-STS policy of bad\.sts\.test: certificate not valid for mx\.bad\.sts\.test/,
      );
      const e = (await t.api.get(`/v1/emails/${id}`)).body;
      expect(e.recipients[0].status).to.equal('deferred');
      expect(badSink.rcptAttempts('ann@bad.sts.test'), 'RCPT TO sent').to.equal(0);
      expect(badSink.messagesTo('ann@bad.sts.test')).to.deep.equal([]);
    });

    it('enforce, a valid certificate for the MX name: delivered over TLS', async function () {
      await delivered(await send('bob@good.sts.test'));
      const m = await goodSink.waitForMessage('bob@good.sts.test');
      expect(m.secure).to.equal(true);
    });

    it('testing, a certificate the CA did not sign: delivered as without a policy', async function () {
      await delivered(await send('cy@testing.sts.test'));
      expect((await badSink.waitForMessage('cy@testing.sts.test')).secure).to.equal(true);
    });

    it('enforce, an MX host the policy does not list: the recipient waits, the host is not contacted', async function () {
      const id = await send('di@nomatch.sts.test');
      expect(await delayedBy(id)).to.match(
        /^451 4\.7\.5 MTA-STS policy of nomatch\.sts\.test: mx\.nomatch\.sts\.test does not match/,
      );
      expect(goodSink.rcptAttempts('di@nomatch.sts.test')).to.equal(0);
    });

    it('fetches a policy once for many messages, and again once its TXT id changes', async function () {
      const ids = await Promise.all([1, 2, 3].map((i) => send(`c${i}@cache.sts.test`)));
      for (const id of ids) await delivered(id);
      expect(fetches.get('cache.sts.test')).to.equal(1);
      setTxtId('cache.sts.test', '2');
      // past the minute a domain's policy is kept in memory
      offset += 61_000;
      await delivered(await send('c4@cache.sts.test'));
      expect(fetches.get('cache.sts.test')).to.equal(2);
      for (const i of [1, 2, 3, 4]) expect(goodSink.messagesTo(`c${i}@cache.sts.test`)[0].secure).to.equal(true);
    });

    it('keeps applying the cached policy when fetching the new one fails', async function () {
      const first = await send('k1@keep.sts.test');
      expect(await delayedBy(first)).to.match(/^451 4\.7\.5 MTA-STS policy of keep\.sts\.test: certificate not valid/);
      expect(fetches.get('keep.sts.test')).to.equal(1);
      setTxtId('keep.sts.test', '2');
      failing.add('keep.sts.test');
      offset += 61_000;
      // without the cached policy this would be delivered (STARTTLS without a certificate check)
      const second = await send('k2@keep.sts.test');
      expect(await delayedBy(second)).to.match(/^451 4\.7\.5 MTA-STS policy of keep\.sts\.test: certificate not valid/);
      expect(fetches.get('keep.sts.test')).to.be.at.least(2);
      expect(badSink.rcptAttempts('k2@keep.sts.test')).to.equal(0);
    });

    it("mails a TLS report despite the recipient domain's own policy (RFC 8460 §5.3), as a multipart/report", async function () {
      // yesterday's sessions of a policy domain whose reports go to two domains no ordinary mail reaches
      const day = Math.floor((Date.now() + offset) / 86_400_000) - 1;
      await addTlsRptCounts(w.db.store.knex, [
        {
          policyDomain: 'report.sts.test',
          day,
          policyType: 'sts',
          resultType: 'success',
          mxHost: 'mx.report.sts.test',
          sendingIp: '127.0.0.1',
          receivingIp: GOOD_MX,
          policyString: [policyOf('enforce', 'mx.report.sts.test').trim()],
          count: 4,
        },
      ]);
      w.world.add(
        '_smtp._tls.report.sts.test',
        'TXT',
        'v=TLSRPTv1; rua=mailto:tls@nomatch.sts.test,mailto:tls@bad.sts.test',
      );
      const fetched = { nomatch: fetches.get('nomatch.sts.test'), bad: fetches.get('bad.sts.test') };
      const config = w.api.config;
      const withFrom = { ...config, outbound: { ...config.outbound, tlsRpt: { ...config.outbound.tlsRpt, from } } };
      expect(await tlsReportJob(withFrom, w.api.core).run()).to.match(
        /^2 TLS report\(s\) sent \(0 by HTTPS, 2 by mail\)/,
      );
      // nomatch's policy lists no MX it has; bad's MX has a certificate no CA signed: both get the report
      const [toNomatch, toBad] = [
        await goodSink.waitForMessage('tls@nomatch.sts.test'),
        await badSink.waitForMessage('tls@bad.sts.test'),
      ];
      for (const m of [toNomatch, toBad]) {
        const parsed = await simpleParser(m.raw);
        const type = parsed.headers.get('content-type') as { value: string; params: Record<string, string> };
        expect(type.value).to.equal('multipart/report');
        expect(type.params['report-type']).to.equal('tlsrpt');
        expect(parsed.attachments.map((a) => a.contentType)).to.deep.equal(['application/tlsrpt+gzip']);
        expect(parsed.headers.get('tls-report-domain')).to.equal('report.sts.test');
      }
      // still over STARTTLS where offered; the recipients' policies were not even looked at
      expect(toBad.secure).to.equal(true);
      expect({ nomatch: fetches.get('nomatch.sts.test'), bad: fetches.get('bad.sts.test') }).to.deep.equal(fetched);
      // an ordinary email with the same tag is held to the policy all the same
      const r = await t.api.post('/v1/emails', {
        from,
        to: ['tls2@nomatch.sts.test'],
        subject: 'Report Domain: report.sts.test',
        text: 'not a report',
        tags: { posthorn: 'tls_report' },
      });
      expect(r.status, r.text).to.equal(202);
      expect(await delayedBy(r.body.id as string)).to.match(/^451 4\.7\.5 MTA-STS policy of nomatch\.sts\.test/);
    });
  });

  describe(`TLS-RPT counts and the day's report [${kind}]${kind === 'pg' ? ' @pg' : ''}`, function () {
    it('adds up the sessions of each policy domain and builds RFC 8460 report JSON from them', async function () {
      const db = await freshDatabase(kind);
      try {
        await db.store.migrateLatest();
        const now = Date.UTC(2026, 10, 22, 7, 15);
        const counter = new TlsRptCounter({
          clock: { now: () => now },
          write: (fn) => db.store.knex.transaction((trx) => fn(trx)),
        });
        const sts = {
          type: 'sts' as const,
          domain: 'example.test',
          testing: false,
          strings: ['version: STSv1', 'mode: enforce', 'mx: mx.example.test', 'max_age: 86400'],
        };
        const hosts = { mxHost: 'mx.example.test', sendingIp: '192.0.2.1', receivingIp: '198.51.100.7' };
        counter.record(sts, hosts, 'success');
        counter.record(sts, hosts, 'success');
        await counter.flush();
        counter.record(sts, hosts, 'success');
        counter.record(sts, hosts, 'certificate-expired');
        await counter.stop();
        const reports = await tlsReportsOfDay(db.store.knex, Math.floor(now / 86_400_000), {
          organizationName: 'Posthorn',
          contactInfo: 'tlsrpt@mta.example.org',
          submitter: 'mta.example.org',
        });
        expect(reports).to.have.length(1);
        const r = reports[0].report;
        expect(r['date-range']).to.deep.equal({
          'start-datetime': '2026-11-22T00:00:00Z',
          'end-datetime': '2026-11-23T00:00:00Z',
        });
        expect(r.policies[0].policy).to.deep.equal({
          'policy-type': 'sts',
          'policy-string': sts.strings,
          'policy-domain': 'example.test',
          'mx-host': ['mx.example.test'],
        });
        expect(r.policies[0].summary).to.deep.equal({
          'total-successful-session-count': 3,
          'total-failure-session-count': 1,
        });
        expect(r.policies[0]['failure-details']).to.deep.equal([
          {
            'result-type': 'certificate-expired',
            'sending-mta-ip': '192.0.2.1',
            'receiving-mx-hostname': 'mx.example.test',
            'receiving-ip': '198.51.100.7',
            'failed-session-count': 1,
          },
        ]);
      } finally {
        await db.drop();
      }
    });
  });
}
