import { expect } from 'chai';
import { performance } from 'node:perf_hooks';
import { AuthThrottle } from '../../src/lib/auth-throttle.js';
import { RateLimiter } from '../../src/lib/rate-limiter.js';
import { systemClock } from '../../src/lib/time.js';
import { authFailures, authRefusals, smtpDrops } from '../../src/log/metrics.js';
import type { Listener, ListenerOptions } from '../../src/smtp/listener.js';
import { startSubmissionListener, type SubmissionDeps } from '../../src/smtp/submission.js';
import type { Tenant } from '../helpers/api.js';
import { startLiveWorld, type LiveWorld } from '../helpers/live.js';
import { counterValue, listenerOptionsFor, RawSmtp } from '../helpers/smtp-raw.js';

/** AUTH PLAIN with any user name and `key` as the password, as submission takes it. */
const authPlain = (key: string) => `AUTH PLAIN ${Buffer.from(`\0app\0${key}`).toString('base64')}`;
/** well formed, issued to nobody */
const WRONG = `ph_test_${'A'.repeat(40)}`;

/** A session past EHLO; `from` is its local address (127.0.0.2 is another client). */
async function session(port: number, from?: string): Promise<RawSmtp> {
  const s = await RawSmtp.open(port, from ? { localAddress: from } : {});
  expect(await s.command('EHLO client.test')).to.match(/^250/);
  return s;
}

async function timed<T>(p: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await p();
  return { value, ms: performance.now() - t0 };
}

describe('SMTP AUTH that slows guessing (issue 38)', function () {
  this.timeout(30_000);
  let w: LiveWorld;
  let t: Tenant;
  let port: number;
  const submission = (o: Partial<ListenerOptions>, deps: Partial<SubmissionDeps>): Promise<Listener> =>
    startSubmissionListener(listenerOptionsFor({ name: 'submission', ...o }), {
      auth: w.api.core.services.auth,
      emails: w.api.core.services.emails,
      limiter: new RateLimiter(1000, systemClock),
      throttle: new AuthThrottle({ failuresPerIp: 100, windowMs: 600_000 }, systemClock),
      ...deps,
    });

  before(async function () {
    w = await startLiveWorld(
      'dkim.auth.test',
      'mta.auth.test',
      { smtp: { inbound: { enabled: false }, submission: { host: '127.0.0.1', port: 0 } } },
      { submission: true },
    );
    port = w.api.running.submissionPort!;
    t = await w.api.tenant({ mode: 'test' });
  });
  after(async function () {
    await w.stop();
  });

  it('answers a failed AUTH after 1 s and the next after 2 s, and a right key at once; the failures count under listener submission', async function () {
    const before = await counterValue(authFailures, { listener: 'submission' });
    const s = await session(port);
    const first = await timed(() => s.command(authPlain(WRONG)));
    expect(first.value).to.match(/^535 5\.7\.8 authentication failed/);
    expect(first.ms).to.be.at.least(995);
    const second = await timed(() => s.command(authPlain('not a key')));
    expect(second.value).to.match(/^535 5\.7\.8/);
    expect(second.ms).to.be.at.least(1995);
    // a third failure would wait 4 s; a right key is not held back at all
    const right = await timed(() => s.command(authPlain(t.key)));
    expect(right.value).to.match(/^235 /);
    expect(right.ms).to.be.below(3000);
    expect(await counterValue(authFailures, { listener: 'submission' })).to.equal(before + 2);
    s.destroy();
  });

  context('with the session failure pause shortened', function () {
    let sub: Listener;
    before(async function () {
      sub = await submission({}, { authFailureDelay: () => 20 });
    });
    after(async function () {
      await sub.close();
    });

    it('answers the third failure of a session 421 4.7.0 and closes the connection', async function () {
      const before = await counterValue(smtpDrops, { listener: 'submission', limit: 'auth_failures' });
      const s = await session(sub.port);
      const replies = [
        await s.command(authPlain(WRONG)),
        await s.command(authPlain(WRONG)),
        await s.command(authPlain(WRONG)),
      ];
      expect(replies.map((r) => r.slice(0, 3))).to.deep.equal(['535', '535', '421']);
      expect(replies[2]).to.equal('421 4.7.0 too many failed authentications, closing connection');
      await s.closed;
      expect(await counterValue(smtpDrops, { listener: 'submission', limit: 'auth_failures' })).to.equal(before + 1);
    });
  });

  context('when its client address has failed limits.auth_failures_per_ip times in the window', function () {
    let sub: Listener;
    before(async function () {
      sub = await submission(
        {},
        {
          authFailureDelay: () => 20,
          throttle: new AuthThrottle({ failuresPerIp: 2, windowMs: 600_000 }, systemClock),
        },
      );
    });
    after(async function () {
      await sub.close();
    });

    it('refuses AUTH with 454 4.7.0 without looking at the key, except a key this process saw succeed; another address is not refused', async function () {
      const refusedBefore = await counterValue(authRefusals, { listener: 'submission' });
      const seen = await session(sub.port);
      expect(await seen.command(authPlain(t.key))).to.match(/^235 /);
      seen.destroy();
      const guesser = await session(sub.port);
      for (let i = 0; i < 2; i++) expect(await guesser.command(authPlain(WRONG))).to.match(/^535 /);
      guesser.destroy();

      const refused = await session(sub.port);
      expect(await refused.command(authPlain(WRONG))).to.match(
        /^454 4\.7\.0 too many failed authentications from your address, try again in \d+ s$/,
      );
      // a real key this process has not seen succeed is refused like a guess: its key is not looked at
      const unseen = await t.newKey({ mode: 'test' });
      expect(await refused.command(authPlain(unseen.key))).to.match(/^454 4\.7\.0/);
      expect(await refused.command(authPlain(t.key))).to.match(/^235 /);
      refused.destroy();

      const other = await session(sub.port, '127.0.0.2');
      expect(await other.command(authPlain(WRONG))).to.match(/^535 /);
      other.destroy();
      expect(await counterValue(authRefusals, { listener: 'submission' })).to.equal(refusedBefore + 2);
    });
  });

  context('without a certificate, for a client that is not trusted to send its key in clear text', function () {
    let sub: Listener;
    before(async function () {
      sub = await submission({ trustedAddress: () => false }, {});
    });
    after(async function () {
      await sub.close();
    });

    it('offers neither AUTH nor STARTTLS, answers AUTH 538 5.7.11 and MAIL 530 5.7.0', async function () {
      const s = await RawSmtp.open(sub.port);
      const ehlo = await s.command('EHLO client.test');
      expect(ehlo).to.match(/^250/);
      expect(ehlo).to.not.match(/AUTH|STARTTLS/);
      expect(await s.command(authPlain(t.key))).to.equal('538 5.7.11 encryption required: issue STARTTLS first');
      expect(await s.command('MAIL FROM:<app@example.test>')).to.match(/^530 5\.7\.0 authentication required/);
      s.destroy();
    });
  });
});
