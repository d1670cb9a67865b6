import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Tenant } from '../helpers/api.js';
import { DATABASE_KINDS } from '../helpers/databases.js';
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
import { tlsReportsOfDay } from '../../src/mta/tls-policy/tls-rpt-counter.js';

// DANE (RFC 7672) as a sender of mail sees it: the test DNS plays a validating resolver, which
// sets the AD bit on answers from the zones it calls signed; the MX hosts are SMTP sinks on
// loopback addresses offering STARTTLS with self-signed certificates, as DANE-EE allows.

const DANE_MX = '127.0.0.61';

/** `3 1 1`: DANE-EE, the SubjectPublicKeyInfo, its SHA-256 (RFC 7672 §3.1.1). */
function daneEe(pem: string): string {
  const spki = new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' });
  return `3 1 1 ${createHash('sha256').update(spki).digest('hex')}`;
}

function selfSigned(dir: string, name: string, cn: string): { key: string; cert: string } {
  execFileSync(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '30'],
      ...['-keyout', `${name}.key`, '-out', `${name}.pem`, '-subj', `/CN=${cn}`],
    ],
    { cwd: dir, stdio: 'pipe' },
  );
  return { key: readFileSync(join(dir, `${name}.key`), 'utf8'), cert: readFileSync(join(dir, `${name}.pem`), 'utf8') };
}

for (const kind of DATABASE_KINDS) {
  describe(`DANE in direct delivery [${kind}]${kind === 'pg' ? ' @pg' : ''}`, function () {
    this.timeout(60_000);
    let w: LiveWorld;
    let t: Tenant;
    let from: string;
    let sink: SmtpSink;
    let stopped = false;

    before(async function () {
      const dir = tempDir('posthorn-dane-');
      const served = selfSigned(dir, 'mx', 'mx.dane.test');
      const other = selfSigned(dir, 'other', 'mx.dane.test');
      w = await startLiveWorld('dkim.dane.test', 'mta.dane.test', {}, {}, kind);
      sink = await startSink({ host: DANE_MX, port: w.sink.port, starttls: true, tls: served });
      const mx = (domain: string, address: string, tlsa: string | null) => {
        w.world.add(domain, 'MX', { exchange: `mx.${domain}`, priority: 10 });
        w.world.add(`mx.${domain}`, 'A', address);
        if (tlsa) w.world.add(`_25._tcp.mx.${domain}`, 'TLSA', tlsa);
      };
      mx('match.dane.test', DANE_MX, daneEe(served.cert));
      mx('mismatch.dane.test', DANE_MX, daneEe(other.cert));
      // the zone is not signed: its TLSA records are not validated, and so not used
      mx('unsigned.dane.test', DANE_MX, daneEe(other.cert));
      // the world's default sink, which offers no STARTTLS
      mx('plain.dane.test', '127.0.0.1', daneEe(served.cert));
      mx('bogus.dane.test', DANE_MX, daneEe(served.cert));
      for (const zone of ['match.dane.test', 'mismatch.dane.test', 'plain.dane.test', 'bogus.dane.test'])
        w.world.sign(zone);
      w.world.fail('_25._tcp.mx.bogus.dane.test', 'TLSA');
      t = await w.api.tenant({ mode: 'live' });
      from = `shop@${(await verifiedDomain(t, w.world)).domain}`;
    });
    after(async function () {
      await sink?.stop();
      if (stopped) {
        await w.sink.stop();
        await w.world.stop();
        await w.db.drop();
      } else await w?.stop();
    });

    const send = (to: string) => sendReceipt(t.api, from, to);
    const delivered = (id: string) => waitEmail(t.api, id, (e) => e.recipients[0].status === 'delivered');
    const delayedBy = (id: string) => delayReason(t.api, id);

    it('a certificate that matches the validated TLSA record: delivered over TLS', async function () {
      await delivered(await send('ann@match.dane.test'));
      expect((await sink.waitForMessage('ann@match.dane.test')).secure).to.equal(true);
    });

    it('a certificate that matches no validated TLSA record: the recipient waits, no transaction is begun', async function () {
      const id = await send('bob@mismatch.dane.test');
      expect(await delayedBy(id)).to.equal(
        '451 4.7.5 DANE: certificate of mx.mismatch.dane.test matches no TLSA record',
      );
      expect((await t.api.get(`/v1/emails/${id}`)).body.recipients[0].status).to.equal('deferred');
      expect(sink.rcptAttempts('bob@mismatch.dane.test')).to.equal(0);
    });

    it('TLSA records without DNSSEC validation (no AD bit) are ignored: delivered as before', async function () {
      await delivered(await send('cy@unsigned.dane.test'));
      expect(sink.messagesTo('cy@unsigned.dane.test')).to.have.length(1);
    });

    it('validated TLSA records and no STARTTLS: the recipient waits, nothing is sent in plain text', async function () {
      const id = await send('di@plain.dane.test');
      expect(await delayedBy(id)).to.match(/^451 4\.7\.5 DANE: mx\.plain\.dane\.test does not offer STARTTLS/);
      expect(w.sink.rcptAttempts('di@plain.dane.test')).to.equal(0);
    });

    it('a TLSA lookup that fails in a signed zone: the host is not used, the recipient waits', async function () {
      const id = await send('ed@bogus.dane.test');
      expect(await delayedBy(id)).to.match(
        /^451 4\.7\.5 DANE: TLSA lookup for _25\._tcp\.mx\.bogus\.dane\.test failed/,
      );
      expect(sink.rcptAttempts('ed@bogus.dane.test')).to.equal(0);
    });

    it("counts the sessions for TLS-RPT: the day's report of each policy domain", async function () {
      // stopping the MTA writes what it counted
      await w.api.stop();
      stopped = true;
      const reports = await tlsReportsOfDay(w.db.store.knex, Math.floor(Date.now() / 86_400_000), {
        organizationName: 'Posthorn',
        contactInfo: 'tlsrpt@mta.dane.test',
        submitter: 'mta.dane.test',
      });
      const of = (domain: string) => reports.find((r) => r.policyDomain === domain)?.report.policies[0];
      expect(of('match.dane.test')?.summary['total-successful-session-count']).to.be.at.least(1);
      expect(of('match.dane.test')?.policy['policy-type']).to.equal('tlsa');
      expect(of('mismatch.dane.test')?.['failure-details'][0]).to.include({
        'result-type': 'tlsa-invalid',
        'receiving-mx-hostname': 'mx.mismatch.dane.test',
        'receiving-ip': DANE_MX,
      });
      expect(of('plain.dane.test')?.['failure-details'][0]['result-type']).to.equal('starttls-not-supported');
      expect(reports.find((r) => r.policyDomain === 'unsigned.dane.test')).to.equal(undefined);
    });
  });
}
