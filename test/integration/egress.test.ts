import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createResolver } from '../../src/dns/resolver.js';
import {
  checkUrl,
  EgressError,
  EgressRequestError,
  GLANCE_BYTES,
  guardedRequest,
  requestChecked,
  resolverLookup,
  type EgressOptions,
} from '../../src/net/egress.js';
import { startDnsWorld, type DnsWorld } from '../helpers/dns-world.js';
import { startReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';
import { waitFor } from '../helpers/wait.js';

/** Resolves with the error a promise rejects with; fails when it does not reject. */
async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a rejection');
}

async function refusal(p: Promise<unknown>): Promise<EgressError> {
  const e = await rejection(p);
  expect(e, e.message).to.be.instanceOf(EgressError);
  return e as EgressError;
}

async function failure(p: Promise<unknown>): Promise<EgressRequestError> {
  const e = await rejection(p);
  expect(e, e.message).to.be.instanceOf(EgressRequestError);
  return e as EgressRequestError;
}

describe('egress guard (CONTRACT §4: SSRF, allow_private, ca_file)', function () {
  let world: DnsWorld;
  let hooks: HttpsReceiver;
  let resolve: EgressOptions['resolve'];
  let n = 0;
  const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}-${++n}`;
  const escaped: unknown[] = [];
  const onEscape = (e: unknown) => escaped.push(e);

  // names a webhook or attachment URL might use; nothing ever connects to the non-loopback ones
  const PRIVATE: Array<[string, 'A' | 'AAAA', string]> = [
    ['loopback.test', 'A', '127.0.0.1'],
    ['ten.test', 'A', '10.0.0.1'],
    ['metadata.test', 'A', '169.254.169.254'],
    ['v6-loopback.test', 'AAAA', '::1'],
    // dns2 only encodes the all-hex form of ::ffff:127.0.0.1
    ['mapped.test', 'AAAA', '::ffff:7f00:1'],
    ['cgnat.test', 'A', '100.64.0.1'],
    ['zero.test', 'A', '0.0.0.0'],
  ];

  before(async function () {
    process.on('unhandledRejection', onEscape);
    world = await startDnsWorld();
    hooks = await startReceiver({ ipv6: true });
    for (const [name, type, value] of PRIVATE) world.add(name, type, value);
    world.add('mixed.test', 'A', '93.184.216.34');
    world.add('mixed.test', 'A', '10.0.0.1');
    world.add('mixed6.test', 'A', '93.184.216.34');
    world.add('mixed6.test', 'AAAA', 'fd00::1');
    world.add('public.test', 'A', '93.184.216.34');
    world.add('public.test', 'AAAA', '2606:2800:220:1:248:1893:25c8:1946');
    world.add('text-only.test', 'TXT', 'no address here');
    world.add('hooks.test', 'A', '127.0.0.1');
    world.add('v6.hooks.test', 'AAAA', '::1');
    resolve = resolverLookup(createResolver({ servers: [world.address], timeoutMs: 2000, tries: 1 }));
  });

  after(async function () {
    process.off('unhandledRejection', onEscape);
    await hooks?.stop();
    await world?.stop();
  });

  const strict = () => ({ allowPrivate: false, resolve });
  const open = (extra: Partial<EgressOptions> = {}): EgressOptions => ({
    allowPrivate: true,
    resolve,
    ca: hooks.caPem,
    timeoutMs: 5000,
    userAgent: 'Posthorn-Test',
    ...extra,
  });

  describe('checkUrl', function () {
    context('when network.allow_private is false', function () {
      for (const [name, , value] of PRIVATE) {
        it(`refuses a name that resolves to ${value}`, async function () {
          const e = await refusal(checkUrl(`https://${name}/hook`, strict()));
          expect(e.reason).to.equal('private_address');
        });
      }

      it('refuses a name with one public and one private address', async function () {
        expect((await refusal(checkUrl('https://mixed.test/hook', strict()))).reason).to.equal('private_address');
        expect((await refusal(checkUrl('https://mixed6.test/hook', strict()))).reason).to.equal('private_address');
      });

      for (const url of [
        'https://127.0.0.1/hook',
        'https://[::1]/hook',
        'https://[::ffff:127.0.0.1]/hook',
        'https://0x7f.1/hook',
        'https://2130706433/hook',
        'https://169.254.169.254/latest/meta-data/',
        'https://0.0.0.0/',
        'https://[::]/',
        'https://[fe80::1]/',
      ]) {
        it(`refuses the IP-literal URL ${url}`, async function () {
          expect((await refusal(checkUrl(url, strict()))).reason).to.equal('private_address');
        });
      }

      it('accepts a name whose every address is public, and names the address to connect to', async function () {
        const c = await checkUrl('https://public.test:8443/hook?x=1', strict());
        expect(c).to.include({ address: '93.184.216.34', family: 4 });
        expect(c.url.href).to.equal('https://public.test:8443/hook?x=1');
      });
    });

    it('refuses URLs that are not https', async function () {
      for (const url of [
        'http://hooks.test/hook',
        'ftp://hooks.test/hook',
        'javascript:alert(1)',
        'file:///etc/passwd',
      ]) {
        expect((await refusal(checkUrl(url, strict()))).reason, url).to.equal('not_https');
      }
    });

    it('refuses what is not a URL, or carries credentials', async function () {
      for (const url of ['', 'not a url', 'hooks.test/hook', 'https://', 'https://user:secret@hooks.test/hook']) {
        expect((await refusal(checkUrl(url, strict()))).reason, url).to.equal('invalid_url');
      }
    });

    it('refuses a name that does not exist or has no address', async function () {
      for (const url of ['https://nowhere.test/hook', 'https://text-only.test/hook']) {
        expect((await refusal(checkUrl(url, strict()))).reason, url).to.equal('dns_failure');
      }
    });

    it('lets private addresses through when network.allow_private is true, IPv4-mapped ones as IPv4', async function () {
      const opts = { allowPrivate: true, resolve };
      expect(await checkUrl('https://ten.test/hook', opts)).to.include({ address: '10.0.0.1', family: 4 });
      expect(await checkUrl('https://v6-loopback.test/hook', opts)).to.include({ address: '::1', family: 6 });
      expect(await checkUrl('https://mapped.test/hook', opts)).to.include({ address: '127.0.0.1', family: 4 });
      expect(await checkUrl('https://[::1]:8443/hook', opts)).to.include({ address: '::1', family: 6 });
    });
  });

  describe('guardedRequest', function () {
    it('posts to the endpoint through the checked address, with the given CA', async function () {
      const path = unique('/ok/');
      const body = JSON.stringify({ id: 'evt_1', type: 'email.delivered' });
      const res = await guardedRequest(
        hooks.url(path),
        { method: 'POST', headers: { 'content-type': 'application/json', 'service-event-id': 'evt_1' }, body },
        open(),
      );
      expect(res.status).to.equal(200);
      expect(res.address).to.equal('127.0.0.1');
      expect(res.body.toString()).to.equal('200');
      const seen = hooks.to(path);
      expect(seen).to.have.length(1);
      expect(seen[0]).to.include({ method: 'POST', rawBody: body, localAddress: '127.0.0.1' });
      expect(seen[0].headers).to.include({
        'service-event-id': 'evt_1',
        'content-type': 'application/json',
        'user-agent': 'Posthorn-Test',
        host: `hooks.test:${hooks.port}`,
      });
    });

    it('reaches an IPv6-only name over IPv6, with the CA given as file contents', async function () {
      const path = unique('/ok/');
      const res = await guardedRequest(
        hooks.url(path, 'v6.hooks.test'),
        { method: 'GET' },
        open({ ca: readFileSync(hooks.caFile) }),
      );
      expect(res).to.include({ status: 200, address: '::1' });
      expect(hooks.to(path)[0]).to.include({ method: 'GET', localAddress: '::1' });
    });

    it('checks again at every request: refuses a private address when allow_private is false, and sends nothing', async function () {
      const path = unique('/ok/');
      const e = await refusal(
        guardedRequest(hooks.url(path), { method: 'POST', body: '{}' }, open({ allowPrivate: false })),
      );
      expect(e.reason).to.equal('private_address');
      expect(hooks.to(path)).to.have.length(0);
    });

    it('returns a redirect as the answer and never follows it', async function () {
      const path = unique('/redirect/');
      const res = await guardedRequest(hooks.url(path), { method: 'POST', body: '{}' }, open());
      expect(res.status).to.equal(302);
      expect(res.headers.location).to.equal(path.replace('/redirect/', '/redirected/'));
      await new Promise((r) => setTimeout(r, 200));
      expect(hooks.to(path.replace('/redirect/', '/redirected/'))).to.have.length(0);
    });

    it('gives up on a slow endpoint with a timeout error', async function () {
      const e = await failure(
        guardedRequest(hooks.url(unique('/slow/')), { method: 'POST', body: '{}' }, open({ timeoutMs: 500 })),
      );
      expect(e.reason).to.equal('timeout');
      expect(e.message).to.match(/timeout/);
    });

    it('stops when its signal aborts (shutdown)', async function () {
      const controller = new AbortController();
      const pending = guardedRequest(
        hooks.url(unique('/slow/')),
        { method: 'POST', body: '{}', signal: controller.signal },
        open(),
      );
      setTimeout(() => controller.abort(), 100);
      expect((await failure(pending)).reason).to.equal('aborted');
    });

    it('cuts off an answer larger than maxBodyBytes, announced or streamed', async function () {
      hooks.setBehaviour('/big/', (_req, answer) => answer(200, 'x'.repeat(100_000)));
      hooks.setBehaviour('/stream/', (_req, _answer, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = 'y'.repeat(16 * 1024);
        for (let i = 0; i < 8; i++) res.write(chunk);
        res.end();
      });
      expect(
        (await failure(guardedRequest(hooks.url(unique('/big/')), { method: 'GET', maxBodyBytes: 64 * 1024 }, open())))
          .reason,
      ).to.equal('too_large');
      expect(
        (await failure(guardedRequest(hooks.url(unique('/stream/')), { method: 'GET', maxBodyBytes: 20_000 }, open())))
          .reason,
      ).to.equal('too_large');
      const res = await guardedRequest(
        hooks.url(unique('/big/')),
        { method: 'GET', maxBodyBytes: 10 * 1024 * 1024 },
        open(),
      );
      expect(res.body.length).to.equal(100_000);
      expect(res.truncated).to.equal(false);
    });

    it('without maxBodyBytes (a webhook), answers with the status of a 200 KB answer, announced or streamed, keeping only its first bytes', async function () {
      hooks.setBehaviour('/huge/', (_req, answer) => answer(200, 'x'.repeat(200_000)));
      hooks.setBehaviour('/huge-stream/', (_req, _answer, res) => {
        res.writeHead(201, { 'content-type': 'text/plain' });
        const chunk = 'y'.repeat(16 * 1024);
        for (let i = 0; i < 13; i++) res.write(chunk);
        res.end();
      });
      for (const [prefix, status] of [
        ['/huge/', 200],
        ['/huge-stream/', 201],
      ] as const) {
        const res = await guardedRequest(hooks.url(unique(prefix)), { method: 'POST', body: '{}' }, open());
        expect(res.status, prefix).to.equal(status);
        expect(res.truncated, prefix).to.equal(true);
        expect(res.body.length, prefix).to.equal(GLANCE_BYTES);
      }
      const small = await guardedRequest(hooks.url(unique('/ok/')), { method: 'POST', body: '{}' }, open());
      expect(small).to.include({ status: 200, truncated: false });
      expect(small.body.toString()).to.equal('200');
    });

    it('without maxBodyBytes, answers with the status when the body never ends, within the timeout', async function () {
      hooks.setBehaviour('/endless/', (_req, _answer, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('still going');
      });
      const started = Date.now();
      const res = await guardedRequest(
        hooks.url(unique('/endless/')),
        { method: 'POST', body: '{}' },
        open({ timeoutMs: 800 }),
      );
      expect(res).to.include({ status: 200, truncated: true });
      expect(res.body.toString()).to.equal('still going');
      expect(Date.now() - started).to.be.below(3000);
    });

    it("sends one user-agent header, the caller's spelling and value winning over the default", async function () {
      const path = unique('/ok/');
      await guardedRequest(
        hooks.url(path),
        {
          method: 'POST',
          headers: { 'User-Agent': 'Posthorn/9 (+webhooks)', 'Content-Type': 'application/json' },
          body: '{}',
        },
        open(),
      );
      const raw = hooks.to(path)[0].rawHeaders;
      const named = (name: string) => raw.filter((_, i) => i % 2 === 1 && raw[i - 1].toLowerCase() === name);
      expect(named('user-agent')).to.deep.equal(['Posthorn/9 (+webhooks)']);
      expect(named('content-type')).to.deep.equal(['application/json']);
      const plain = unique('/ok/');
      await guardedRequest(hooks.url(plain), { method: 'GET' }, open());
      const rawPlain = hooks.to(plain)[0].rawHeaders;
      expect(rawPlain.filter((_, i) => i % 2 === 1 && rawPlain[i - 1].toLowerCase() === 'user-agent')).to.deep.equal([
        'Posthorn-Test',
      ]);
    });

    it('does not queue a request behind many slow ones to the same host', async function () {
      this.timeout(15_000);
      const slow = Array.from({ length: 24 }, () =>
        guardedRequest(hooks.url(unique('/delay/3000/')), { method: 'POST', body: '{}' }, open()),
      );
      await waitFor(
        async () => hooks.requests.filter((r) => r.path.startsWith('/delay/3000/') && r.status === null).length >= 24,
        5000,
        'the slow requests to arrive',
      );
      const started = Date.now();
      const fast = await guardedRequest(hooks.url(unique('/ok/')), { method: 'POST', body: '{}' }, open());
      expect(fast.status).to.equal(200);
      expect(Date.now() - started).to.be.below(1000);
      expect((await Promise.all(slow)).map((r) => r.status)).to.deep.equal(Array(24).fill(200));
    });

    it('fails the TLS handshake without the CA of ca_file, and the process goes on', async function () {
      const path = unique('/ok/');
      const e = await failure(guardedRequest(hooks.url(path), { method: 'POST', body: '{}' }, open({ ca: null })));
      expect(e.reason).to.equal('tls');
      expect(e.message).to.match(/certificate/i);
      expect(hooks.to(path)).to.have.length(0);
    });

    it('reports a refused connection as a failure', async function () {
      const e = await failure(guardedRequest('https://hooks.test:1/ok/closed', { method: 'GET' }, open()));
      expect(e.reason).to.equal('refused');
      expect(e.message).to.match(/ECONNREFUSED/);
    });

    it('connects to the address of the check even when DNS changes afterwards (no rebinding)', async function () {
      world.add('rebind.hooks.test', 'AAAA', '::1');
      const first = unique('/ok/');
      const checked = await checkUrl(hooks.url(first, 'rebind.hooks.test'), open());
      world.remove('rebind.hooks.test');
      world.add('rebind.hooks.test', 'A', '127.0.0.1');
      const res = await requestChecked(checked, { method: 'POST', body: '{}' }, open());
      expect(res).to.include({ status: 200, address: '::1' });
      expect(hooks.to(first)[0].localAddress).to.equal('::1');
      // a new check asks DNS again (here with no lookup cache: the appliance keeps answers 5 s)
      const second = unique('/ok/');
      const uncached = resolverLookup(createResolver({ servers: [world.address], timeoutMs: 2000, tries: 1 }), 0);
      await guardedRequest(
        hooks.url(second, 'rebind.hooks.test'),
        { method: 'POST', body: '{}' },
        open({ resolve: uncached }),
      );
      expect(hooks.to(second)[0].localAddress).to.equal('127.0.0.1');
    });

    it("keeps a host's addresses a few seconds, and still checks them at every request", async function () {
      world.add('cached.hooks.test', 'A', '127.0.0.1');
      const lookup = resolverLookup(createResolver({ servers: [world.address], timeoutMs: 2000, tries: 1 }));
      expect(await lookup('cached.hooks.test')).to.deep.equal(['127.0.0.1']);
      world.remove('cached.hooks.test');
      world.add('cached.hooks.test', 'A', '10.0.0.1');
      expect(await lookup('cached.hooks.test')).to.deep.equal(['127.0.0.1']);
      // allow_private off: the kept loopback answer is refused as it was when fresh
      const e = await checkUrl('https://cached.hooks.test/x', { allowPrivate: false, resolve: lookup }).then(
        () => null,
        (err: EgressError) => err,
      );
      expect(e?.reason).to.equal('private_address');
      // a name that failed is asked again
      await lookup('nowhere.hooks.test').catch(() => undefined);
      world.add('nowhere.hooks.test', 'A', '127.0.0.1');
      expect(await lookup('nowhere.hooks.test')).to.deep.equal(['127.0.0.1']);
    });

    it('left no unhandled rejection behind', async function () {
      await new Promise((r) => setTimeout(r, 100));
      expect(escaped).to.deep.equal([]);
    });
  });
});
