import { expect } from 'chai';
import type { Tenant, TestApi } from '../helpers/api.js';
import { DATABASE_KINDS } from '../helpers/databases.js';
import type { DnsWorld } from '../helpers/dns-world.js';
import { dkimResults, startLiveWorld, verifiedDomain, type LiveWorld } from '../helpers/live.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import { waitFor } from '../helpers/wait.js';
import { createResolver } from '../../src/dns/resolver.js';
import {
  advanceRotations,
  startRotation,
  type RotationSummary,
} from '../../src/modules/deliverability/domains/dkim-rotation.service.js';
import { getDomainById } from '../../src/modules/deliverability/domains/domains.service.js';
import { domainKeys } from '../../src/modules/deliverability/domains/domain-keys.repo.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const selectorOf = (raw: Buffer) => /^DKIM-Signature:[^]*?\bs=([a-z0-9]+);/m.exec(raw.toString('latin1'))?.[1];

for (const kind of DATABASE_KINDS) {
  describe(`DKIM key rotation [${kind}]${kind === 'pg' ? ' @pg' : ''}`, function () {
    this.timeout(60_000);
    let live: LiveWorld;
    let world: DnsWorld;
    let sink: SmtpSink;
    let api: TestApi;
    let t: Tenant;
    const w_add = (name: string, txt: string) => world.add(name, 'TXT', txt);
    const advance = (): Promise<RotationSummary> =>
      advanceRotations(api.deps, (d, e) => {
        throw new Error(`${d.name}: ${String(e)}`, { cause: e });
      });

    before(async function () {
      // a key signs 1 s after it is published; a replaced key is removed 3 s after the switch
      live = await startLiveWorld(
        'dkim.rotate.test',
        'mta.rotate.test',
        { dkim: { key_ttl: '1s', retire_after: '3s', rotate_after: '0s' } },
        {},
        kind,
      );
      ({ world, sink, api } = live);
      t = await api.tenant({ mode: 'live' });
    });
    after(async function () {
      await live.stop();
    });

    it('moves signing to a new key while mail is delivered: every message verifies, the old key is removed after retire_after', async function () {
      const d = await verifiedDomain(t, world, {}, true);
      const sent: string[] = [];
      const verified = new Map<string, string>();
      // a failure is kept and asserted at the end: the loop runs beside the test, where a throw would only time it out
      const failures: string[] = [];
      let sending = true;
      const sender = (async () => {
        for (let i = 0; sending; i++) {
          // every other send has two recipients, each with a copy of their own (List-Unsubscribe), signed one after the other
          const to =
            i % 2 ? [`rotate-${kind}-${i}@ok.test`, `rotate-${kind}-${i}b@ok.test`] : [`rotate-${kind}-${i}@ok.test`];
          const res = await t.api.post('/v1/emails', {
            from: `news@${d.domain}`,
            to,
            subject: `Rotation ${i}`,
            text: `message ${i}`,
            ...(i % 2 ? { headers: { 'List-Unsubscribe': '<auto>' } } : {}),
          });
          expect(res.status, res.text).to.equal(202);
          sent.push(...to);
          await sleep(30);
        }
      })();
      // Each message is checked as it arrives, as a receiver would: through the world DNS, while
      // the key that signed it must still be published.
      let checking = true;
      const checker = (async () => {
        while (checking || verified.size < sent.length) {
          for (const m of sink.messages) {
            const to = m.envelope.to[0];
            if (!to.startsWith(`rotate-${kind}-`) || verified.has(to)) continue;
            const result = await dkimResults(world, m.raw);
            if (result.join() !== `${d.domain}:pass`) failures.push(`${to} (${selectorOf(m.raw)}): ${result.join()}`);
            verified.set(to, selectorOf(m.raw)!);
          }
          await sleep(20);
        }
      })();
      const signedWith = (sel: string) => [...verified.values()].filter((s) => s === sel).length;
      await waitFor(async () => signedWith('ph1') >= 5 || null, 15_000, 'mail signed with ph1');

      const domain = await getDomainById(api.deps, d.id);
      await startRotation(api.deps, domain);
      const pending = (await t.api.get(`/v1/domains/${d.id}`)).body.dkim;
      expect(pending.active_selector).to.equal('ph1');
      expect(pending.rotation.selector).to.equal('ph2');
      await startRotation(api.deps, domain).then(
        () => expect.fail('a second rotation started'),
        (e: Error) => expect(e.message).to.include('already under way'),
      );

      // the job's step: nothing before the key was served for its TTL, then the switch
      const first = await advance();
      expect(first.switched).to.equal(0);
      await waitFor(async () => ((await advance()).switched === 1 ? true : null), 10_000, 'the switch');
      const switched = (await t.api.get(`/v1/domains/${d.id}`)).body.dkim;
      expect(switched.active_selector).to.equal('ph2');
      expect(switched.rotation).to.equal(null);
      expect(Date.parse(switched.active_since) - Date.parse(pending.rotation.published_at)).to.be.at.least(1000);
      expect(switched.retiring).to.have.length(1);
      expect(switched.retiring[0].selector).to.equal('ph1');

      await waitFor(async () => signedWith('ph2') >= 5 || null, 15_000, 'mail signed with ph2');
      sending = false;
      await sender;
      checking = false;
      await waitFor(
        async () => verified.size === sent.length || null,
        20_000,
        'every message sent to arrive and verify',
      );
      await checker;
      expect(signedWith('ph1') + signedWith('ph2')).to.equal(sent.length);
      expect(failures, 'messages whose signature did not verify').to.deep.equal([]);

      // after retire_after the old key's record goes; the domain stays verified
      const resolver = createResolver({ servers: [world.address] });
      expect((await resolver.resolveTxt(`ph1._domainkey.${d.domain}`)).length).to.equal(1);
      await sleep(Math.max(0, Date.parse(switched.retiring[0].removed_at) - Date.now() + 50));
      expect((await advance()).retired).to.equal(1);
      await resolver.resolveTxt(`ph1._domainkey.${d.domain}`).then(
        () => expect.fail('the retired key is still published'),
        (e: NodeJS.ErrnoException) => expect(e.code).to.equal('ENOTFOUND'),
      );
      const after = (await t.api.post(`/v1/domains/${d.id}/verify`)).body;
      expect(after.status).to.equal('verified');
      expect(after.dkim.retiring).to.deep.equal([]);

      // a message sent now is signed with the new key and verifies
      const last = `rotate-${kind}-last@ok.test`;
      await t.api.post('/v1/emails', { from: `news@${d.domain}`, to: [last], subject: 'After', text: 'after' });
      const raw = (await sink.waitForMessage(last)).raw;
      expect(selectorOf(raw)).to.equal('ph2');
      expect(await dkimResults(world, raw)).to.deep.equal([`${d.domain}:pass`]);
    });

    it('never changes a key the domain published as a TXT record (it would stop its mail), by hand or by the job', async function () {
      const res = (await t.api.post('/v1/domains', { domain: `txt-${kind}-${Date.now()}.send.test` })).body;
      const keys = new Map((await domainKeys(api.deps.store.knex, res.id)).map((k) => [k.selector, k.publicKey]));
      for (const r of res.records.filter((x: { required: boolean }) => x.required))
        w_add(r.name, `v=DKIM1; k=rsa; p=${keys.get(r.name.split('.')[0])}`);
      expect((await t.api.post(`/v1/domains/${res.id}/verify`)).body.status).to.equal('verified');
      await startRotation(api.deps, await getDomainById(api.deps, res.id)).then(
        () => expect.fail('a rotation started'),
        (e: Error) => expect(e.message).to.include('TXT record'),
      );
      const byAge = {
        ...api.deps,
        domains: { ...api.deps.domains, dkim: { ...api.deps.domains.dkim, rotateAfterMs: 1 } },
      };
      await advanceRotations(byAge, (x, e) => expect.fail(`${x.name}: ${String(e)}`));
      const after = (await t.api.post(`/v1/domains/${res.id}/verify`)).body;
      expect(after.status).to.equal('verified');
      expect(after.dkim.rotation).to.equal(null);
    });

    it('waits while public DNS does not show the new key, and switches once it does', async function () {
      const d = await verifiedDomain(t, world, {}, true);
      const cname = d.records.find((r) => r.name.startsWith('ph2.'))!;
      world.remove(cname.name);
      await startRotation(api.deps, await getDomainById(api.deps, d.id));
      await sleep(1200);
      const waiting = await advance();
      expect(waiting.waiting).to.be.at.least(1);
      expect((await t.api.get(`/v1/domains/${d.id}`)).body.dkim.active_selector).to.equal('ph1');
      world.add(cname.name, 'CNAME', cname.value);
      await advance();
      expect((await t.api.get(`/v1/domains/${d.id}`)).body.dkim.active_selector).to.equal('ph2');
    });

    it('starts a rotation by itself for a verified domain whose key signed longer than rotate_after, and shows the next one in insights', async function () {
      const d = await verifiedDomain(t, world, {}, true);
      const insights = (await t.api.get(`/v1/domains/${d.id}/insights`)).body;
      expect(insights.setup.dkim_key).to.deep.equal({ active_selector: 'ph1', next_rotation_at: null });
      const byAge = {
        ...api.deps,
        domains: { ...api.deps.domains, dkim: { ...api.deps.domains.dkim, rotateAfterMs: 1 } },
      };
      await sleep(5);
      const sum = await advanceRotations(byAge, (x, e) => expect.fail(`${x.name}: ${String(e)}`));
      expect(sum.started).to.be.at.least(1);
      const shown = (await t.api.get(`/v1/domains/${d.id}`)).body.dkim;
      expect(shown.rotation.selector).to.equal('ph2');
    });
  });
}
