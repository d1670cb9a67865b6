import { expect } from 'chai';
import { metricsUrlOf, parseProbeTarget } from '../../src/modules/operations/doctor/doctor.service.js';
import { judgeFcrdns, judgeProbe, judgeZone, report } from '../../src/modules/operations/doctor/verdicts.js';
import {
  DISK_FAIL_BYTES,
  DISK_WARN_BYTES,
  judgeDisk,
  judgeEventLoop,
  judgeTls,
  type TlsFacts,
} from '../../src/modules/operations/doctor/machine-verdicts.js';

const GiB = 1024 ** 3;
const DAY = 86_400_000;
const NOW = Date.parse('2026-03-01T00:00:00Z');

describe('posthorn doctor verdicts', function () {
  describe('report', function () {
    it('is ok with warnings, and not ok with any failure', function () {
      const c = (status: 'ok' | 'warn' | 'fail') => ({ name: 'disk' as const, status, message: '', hint: null });
      expect(report([c('ok'), c('warn')]).ok).to.equal(true);
      expect(report([c('ok'), c('fail'), c('warn')]).ok).to.equal(false);
    });
  });

  describe('disk', function () {
    const disk = (free: number, total = 100 * GiB) =>
      judgeDisk({ path: '/var/lib/posthorn', freeBytes: free, totalBytes: total }).status;
    it('is ok with room, warns when low in bytes or in share, fails below the floor', function () {
      expect(disk(50 * GiB)).to.equal('ok');
      expect(disk(DISK_WARN_BYTES - 1, 10 * GiB)).to.equal('warn');
      expect(disk(3 * GiB, 100 * GiB)).to.equal('warn');
      expect(disk(DISK_FAIL_BYTES - 1)).to.equal('fail');
    });
    it('fails when the free space cannot be read', function () {
      expect(judgeDisk({ path: '/nope', error: 'EACCES' }).status).to.equal('fail');
    });
    it("fails while posthorn serve's writes fail for lack of space, with room or without, and says since when", function () {
      const since = Date.parse('2026-11-29T08:00:00Z');
      for (const free of [50 * GiB, 12 * 1024 ** 2]) {
        const c = judgeDisk({ path: '/var/lib/posthorn', freeBytes: free, totalBytes: 100 * GiB, fullSince: since });
        expect(c.status).to.equal('fail');
        expect(c.message).to.include('failed for lack of space since 2026-11-29T08:00:00.000Z');
        expect(c.hint).to.match(/resume by themselves/);
      }
      expect(
        judgeDisk({ path: '/var/lib/posthorn', freeBytes: 50 * GiB, totalBytes: 100 * GiB, fullSince: null }).status,
      ).to.equal('ok');
    });
    it('gives a small disk in MiB', function () {
      expect(judgeDisk({ path: '/data', freeBytes: 3 * 1024 ** 2, totalBytes: 16 * 1024 ** 2 }).message).to.match(
        /^3\.0 MiB free of 16\.0 MiB \(18%\) under \/data$/,
      );
    });
  });

  describe('tls', function () {
    const loaded = (over: Partial<Extract<TlsFacts, { kind: 'loaded' }>> = {}): TlsFacts => ({
      kind: 'loaded',
      certPath: 'c.pem',
      keyPath: 'k.pem',
      keyMatches: true,
      notBefore: NOW - 30 * DAY,
      notAfter: NOW + 60 * DAY,
      namesHost: true,
      subject: 'CN=mta.example.com',
      ...over,
    });
    it('is ok for a matching, current certificate that names the host', function () {
      expect(judgeTls(loaded(), 'mta.example.com', NOW).status).to.equal('ok');
    });
    it('warns about an expired, not yet valid, soon expiring or misnamed certificate', function () {
      const expired = judgeTls(loaded({ notAfter: NOW - DAY }), 'mta.example.com', NOW);
      expect(expired).to.include({ status: 'warn' });
      expect(expired.message).to.include('expired');
      expect(judgeTls(loaded({ notBefore: NOW + DAY }), 'mta.example.com', NOW).message).to.include('valid only from');
      expect(judgeTls(loaded({ notAfter: NOW + 3 * DAY }), 'mta.example.com', NOW).message).to.include('expires on');
      expect(judgeTls(loaded({ namesHost: false }), 'mta.example.com', NOW).message).to.include(
        'does not name mta.example.com',
      );
    });
    it('fails on a key of another certificate and on a file that does not load; warns when TLS is off', function () {
      expect(judgeTls(loaded({ keyMatches: false }), 'mta.example.com', NOW).status).to.equal('fail');
      expect(
        judgeTls({ kind: 'unreadable', file: 'key', path: 'k.pem', detail: 'ENOENT' }, 'mta.example.com', NOW).status,
      ).to.equal('fail');
      expect(judgeTls({ kind: 'not_configured' }, 'mta.example.com', NOW).status).to.equal('warn');
    });
  });

  describe('fcrdns', function () {
    const found = (...values: string[]) => ({ kind: 'found' as const, values });
    it('is ok when every address points back, warns when some do, fails when none do', function () {
      const ok = {
        hostname: 'mta.example.com',
        addresses: found('192.0.2.1'),
        ptrs: [{ address: '192.0.2.1', names: found('MTA.example.com.') }],
      };
      expect(judgeFcrdns(ok).status).to.equal('ok');
      const some = {
        ...ok,
        addresses: found('192.0.2.1', '2001:db8::1'),
        ptrs: [...ok.ptrs, { address: '2001:db8::1', names: { kind: 'none' as const } }],
      };
      expect(judgeFcrdns(some).status).to.equal('warn');
      const none = { ...ok, ptrs: [{ address: '192.0.2.1', names: found('host-1.provider.example') }] };
      expect(judgeFcrdns(none)).to.include({ status: 'fail' });
      expect(judgeFcrdns(none).message).to.include('PTR host-1.provider.example');
    });
    it('fails for localhost without asking DNS', function () {
      expect(judgeFcrdns({ hostname: 'localhost', addresses: { kind: 'none' }, ptrs: [] }).status).to.equal('fail');
    });
  });

  describe('port 25', function () {
    it('warns when not run, is ok on 220, warns on another greeting, fails without one', function () {
      expect(judgeProbe(null, null, false).status).to.equal('warn');
      expect(judgeProbe('mx.example:25', { kind: 'greeting', code: 220, text: 'mx ESMTP' }, false).status).to.equal(
        'ok',
      );
      expect(judgeProbe('mx.example:25', { kind: 'greeting', code: 554, text: 'blocked' }, false).status).to.equal(
        'warn',
      );
      expect(judgeProbe('mx.example:25', { kind: 'timeout', detail: 'no greeting' }, false).status).to.equal('fail');
    });
  });

  describe('dns zone', function () {
    const base = {
      zone: 'dkim.example.com',
      hostname: 'mta.example.com',
      serverEnabled: true,
      hostAddresses: ['192.0.2.1'],
      nameServerAddresses: [],
    };
    it('is ok when a name server is the appliance by name or by address', function () {
      expect(judgeZone({ ...base, nameServers: { kind: 'found', values: ['mta.example.com'] } }).status).to.equal('ok');
      expect(
        judgeZone({
          ...base,
          nameServers: { kind: 'found', values: ['ns1.example.com'] },
          nameServerAddresses: [{ name: 'ns1.example.com', addresses: ['192.0.2.1'] }],
        }).status,
      ).to.equal('ok');
    });
    it('warns when delegated elsewhere or when the DNS server is off; fails when not delegated or unanswered', function () {
      expect(
        judgeZone({
          ...base,
          nameServers: { kind: 'found', values: ['ns.other.example'] },
          nameServerAddresses: [{ name: 'ns.other.example', addresses: ['198.51.100.7'] }],
        }).status,
      ).to.equal('warn');
      expect(
        judgeZone({ ...base, serverEnabled: false, nameServers: { kind: 'found', values: ['mta.example.com'] } })
          .status,
      ).to.equal('warn');
      expect(judgeZone({ ...base, nameServers: { kind: 'none' } }).status).to.equal('fail');
      expect(judgeZone({ ...base, nameServers: { kind: 'error', detail: 'ESERVFAIL' } }).status).to.equal('fail');
    });
  });

  describe('--probe', function () {
    it('reads HOST, HOST:PORT, [IPv6]:PORT and a bare IPv6 address, port 25 unless given', function () {
      expect(parseProbeTarget('mx.example.com')).to.deep.equal({ host: 'mx.example.com', port: 25 });
      expect(parseProbeTarget('127.0.0.1:2525')).to.deep.equal({ host: '127.0.0.1', port: 2525 });
      expect(parseProbeTarget('[::1]:2525')).to.deep.equal({ host: '::1', port: 2525 });
      expect(parseProbeTarget('2001:db8::25')).to.deep.equal({ host: '2001:db8::25', port: 25 });
    });
    it('refuses a bad port', function () {
      for (const bad of ['mx.example.com:', 'mx.example.com:smtp', 'mx.example.com:70000', ':25'])
        expect(() => parseProbeTarget(bad), bad).to.throw(/--probe/);
    });
  });

  describe('event loop', function () {
    const url = 'http://127.0.0.1:8025/metrics';
    it('is ok with each thread under 100 ms, warns when one is over, and is ok (not measured) when no serve answers', function () {
      expect(
        judgeEventLoop({
          url,
          lags: [
            { thread: 'api', seconds: 0.021 },
            { thread: 'background', seconds: 0.09 },
          ],
        }),
      ).to.include({ status: 'ok', message: 'event-loop lag p99 since the last scrape: api 21 ms, background 90 ms' });
      const slow = judgeEventLoop({
        url,
        lags: [
          { thread: 'api', seconds: 4.2 },
          { thread: 'background', seconds: 0.01 },
        ],
      });
      expect(slow).to.include({
        status: 'warn',
        message: 'event-loop lag p99 since the last scrape over 100 ms: api 4200 ms, background 10 ms',
      });
      expect(slow.hint).to.include('posthorn_parse_jobs_total');
      expect(judgeEventLoop({ url, error: 'ECONNREFUSED' })).to.include({
        status: 'ok',
        message: `not measured: no posthorn serve answered at ${url} (ECONNREFUSED)`,
      });
      expect(judgeEventLoop({ url, lags: [] }).status).to.equal('warn');
    });
    it('asks the metrics listener when it has one, and loopback for a wildcard bind', function () {
      expect(metricsUrlOf({ host: '0.0.0.0', port: 8025 }, { host: '127.0.0.1', port: null })).to.equal(
        'http://127.0.0.1:8025/metrics',
      );
      expect(metricsUrlOf({ host: '::', port: 8025 }, { host: '127.0.0.1', port: null })).to.equal(
        'http://[::1]:8025/metrics',
      );
      expect(metricsUrlOf({ host: '127.0.0.1', port: 8025 }, { host: '10.0.0.5', port: 9464 })).to.equal(
        'http://10.0.0.5:9464/metrics',
      );
    });
  });
});
