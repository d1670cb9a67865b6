import { createSocket, type Socket } from 'node:dgram';
import { domainToASCII } from 'node:url';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { expectError } from '../helpers/assert.js';
import { startDnsWorld, type DnsWorld } from '../helpers/dns-world.js';
import { storedEmail } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';
import type { Reply } from '../helpers/http.js';
import { setProject } from '../../src/modules/account/projects/projects.service.js';
import { getDomain } from '../../src/modules/deliverability/domains/domains.service.js';
import { recheckDomains, verifyDomain } from '../../src/modules/deliverability/domains/verification.service.js';
import type { DomainDeps } from '../../src/modules/deliverability/domains/domain-settings.js';
import { PENDING_GIVE_UP_MS } from '../../src/modules/deliverability/domains/domain-state.js';
import { recordTracking } from '../../src/modules/sending/tracking/tracking.service.js';
import { createResolver } from '../../src/dns/resolver.js';
import type { RecipientStatus } from '../../src/modules/sending/emails/email.js';

interface Rec {
  purpose: string;
  required: boolean;
  type: 'CNAME' | 'MX' | 'TXT';
  name: string;
  value: string;
  dns: string;
}

let seq = 0;
const uniqueDomain = (base = 'send.test') => `d${Date.now().toString(36)}${++seq}.${base}`;

function publish(world: DnsWorld, records: Rec[], filter: (r: Rec) => boolean = () => true) {
  for (const r of records.filter(filter))
    world.add(r.name, r.type, r.type === 'MX' ? { exchange: r.value, priority: 10 } : r.value);
}

/** A UDP socket that takes DNS queries and never answers them: a resolver that times out. */
function silentUdp(): Promise<Socket> {
  return new Promise((resolve) => {
    const s = createSocket('udp4');
    s.bind(0, '127.0.0.1', () => resolve(s));
  });
}

/** A loopback UDP port with nothing listening: queries are refused (ICMP port unreachable). */
function closedUdpPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createSocket('udp4');
    s.bind(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * PostgreSQL: run `start` while a SHARE lock on domains holds back every
 * insert (reads go on), and let go once `sessions` sessions wait on a lock,
 * so that concurrent creations meet at the point where they race.
 */
async function meetingAtInsert<T>(knex: Knex, sessions: number, start: () => Promise<T>): Promise<T> {
  const blocker = await knex.transaction();
  await blocker.raw('LOCK TABLE domains IN SHARE MODE');
  const running = start();
  try {
    await waitFor(
      async () => {
        const { rows } = await knex.raw<{ rows: Array<{ n: number }> }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        return rows[0].n >= sessions;
      },
      10_000,
      `${sessions} creations waiting on a lock`,
    );
  } finally {
    await blocker.commit();
  }
  return running;
}

eachDatabase('domains (interface §4.2)', (db, kind) => {
  let world: DnsWorld;
  let api: TestApi;
  let t: Tenant;
  before(async function () {
    world = await startDnsWorld();
    api = await startTestApi(db().store, {
      dns: { resolvers: [world.address], zone: 'dkim.appliance.test' },
      outbound: { hostname: 'mta.appliance.test' },
    });
    t = await api.tenant();
  });
  after(async function () {
    await api.stop();
    await world.stop();
  });

  describe('POST /v1/domains', function () {
    it('answers 201 pending with three required DKIM CNAMEs into the appliance zone, unchecked', async function () {
      const name = uniqueDomain();
      const res = await t.api.post('/v1/domains', { domain: name });
      expect(res.status, res.text).to.equal(201);
      const d = res.body;
      expect(d).to.include({
        object: 'domain',
        domain: name,
        status: 'pending',
        failure_reason: null,
        verified_at: null,
        last_checked_at: null,
      });
      expect(d.id).to.match(/^dom_/);
      const dkim = d.records.filter((r: Rec) => r.required);
      expect(dkim).to.have.length(3);
      for (const r of dkim) {
        expect(r).to.include({ purpose: 'dkim', type: 'CNAME', dns: 'unchecked' });
        expect(r.name).to.match(new RegExp(`^ph[123]\\._domainkey\\.${name.replace(/\./g, '\\.')}$`));
        expect(r.value).to.match(/^ph[123]\.[0-9a-f]{20}\.dkim\.appliance\.test$/);
      }
      expect(d.dns_summary).to.deep.equal({ required_total: 3, required_found: 0, checked: false });
      const optional = d.records.filter((r: Rec) => !r.required).map((r: Rec) => [r.purpose, r.type, r.name, r.value]);
      expect(optional).to.deep.equal([
        ['return_path', 'MX', `send.${name}`, 'mta.appliance.test'],
        ['spf', 'TXT', `send.${name}`, 'v=spf1 a:mta.appliance.test ~all'],
        // monitoring only, the aggregate reports mailed to the appliance at the return path (docs/dmarc.md)
        [
          'dmarc',
          'TXT',
          `_dmarc.${name}`,
          `v=DMARC1; p=none; rua=mailto:dmarc+${dkim[0].value.split('.')[1]}@send.${name};`,
        ],
      ]);
      expect(d.tracking).to.deep.equal({ opens: false, clicks: false, available: true });
      expect(JSON.stringify(d)).to.not.match(/PRIVATE KEY|BEGIN/);
    });

    it('accepts an IDN and stores its A-label form', async function () {
      const res = await t.api.post('/v1/domains', { domain: `bücher-${Date.now()}.example` });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.domain).to.match(/^xn--bcher-.*\.example$/);
    });

    it('accepts the domain as name, and settings given at creation', async function () {
      const name = uniqueDomain();
      const res = await t.api.post('/v1/domains', {
        name,
        open_tracking: true,
        custom_return_path: 'bounces',
        tls: 'enforced',
        region: 'eu',
      });
      expect(res.status, res.text).to.equal(201);
      expect(res.body).to.include({
        domain: name,
        tls: 'enforced',
        custom_return_path: 'bounces',
        open_tracking: true,
        click_tracking: false,
        region: 'eu',
      });
      expect(res.body.records.find((r: Rec) => r.purpose === 'return_path').name).to.equal(`bounces.${name}`);
    });

    for (const [body, field] of [
      [{ domain: 'not a domain' }, 'domain'],
      [{ domain: 'localhost' }, 'domain'],
      [{ domain: '192.168.1.10' }, 'domain'],
      [{ domain: 'https://example.com/' }, 'domain'],
      [{ domain: `-bad.example.com` }, 'domain'],
      [{ domain: `${'a'.repeat(64)}.example.com` }, 'domain'],
      [{ domain: `${'a.'.repeat(127)}com` }, 'domain'],
      [{}, 'domain'],
      [{ domain: 'a.example.com', name: 'b.example.com' }, 'name'],
      [{ domain: 'x.simulator.posthorn.test' }, 'domain'],
      [{ domain: 'ok.example.com', colour: 'blue' }, 'colour'],
      [{ domain: 'ok.example.com', custom_return_path: 'Bounce' }, 'custom_return_path'],
      [{ domain: 'ok.example.com', custom_return_path: 'a.b' }, 'custom_return_path'],
      [{ domain: 'ok.example.com', custom_return_path: '-send' }, 'custom_return_path'],
      [{ domain: 'ok.example.com', tls: 'required' }, 'tls'],
      [{ domain: 'ok.example.com', open_tracking: 'yes' }, 'open_tracking'],
      [{ domain: 'x'.repeat(254) }, 'domain'],
    ] as const) {
      it(`answers 400 validation_error naming ${field} for ${JSON.stringify(body).slice(0, 60)}`, async function () {
        expectError(await t.api.post('/v1/domains', body), 400, 'validation_error', field);
      });
    }

    it('answers 409 domain_already_registered when another project holds the domain', async function () {
      const name = uniqueDomain();
      expect((await t.api.post('/v1/domains', { domain: name })).status).to.equal(201);
      const other = await api.tenant();
      const res = await other.api.post('/v1/domains', { domain: name.toUpperCase() + '.' });
      expectError(res, 409, 'domain_already_registered');
      expect(res.body.error.message).to.include('another project');
      expectError(await t.api.post('/v1/domains', { domain: name }), 409, 'domain_already_registered');
    });

    it('answers 409 for the Unicode form of an IDN whose A-label another project holds', async function () {
      const unicode = `bücher-${Date.now()}.example`;
      const aLabel = domainToASCII(unicode);
      expect(aLabel).to.match(/^xn--/);
      expect((await t.api.post('/v1/domains', { domain: aLabel })).status).to.equal(201);
      const other = await api.tenant();
      expectError(await other.api.post('/v1/domains', { domain: unicode }), 409, 'domain_already_registered');
      expectError(
        await other.api.post('/v1/domains', { name: unicode.toUpperCase() }),
        409,
        'domain_already_registered',
      );
    });

    it('answers 403 plan_limit_reached at the project domain limit', async function () {
      const limited = await api.tenant();
      await setProject(api.deps, limited.project.id, { limits: { domains: 1 } });
      expect((await limited.api.post('/v1/domains', { domain: uniqueDomain() })).status).to.equal(201);
      expectError(await limited.api.post('/v1/domains', { domain: uniqueDomain() }), 403, 'plan_limit_reached');
    });

    context('when requests race', function () {
      // On PostgreSQL the five requests are made to meet at their inserts; on SQLite the one writer serialises them.
      const race = (sessions: number, start: () => Promise<Reply[]>) =>
        kind === 'pg' ? meetingAtInsert(db().store.knex, sessions, start) : start();

      for (const where of ['five projects', 'one project'] as const) {
        it(`answers one 201 and four 409 domain_already_registered for five concurrent creations of one name in ${where}`, async function () {
          const name = uniqueDomain();
          const one = await api.tenant();
          const tenants =
            where === 'one project'
              ? [one, one, one, one, one]
              : [one, ...(await Promise.all([1, 2, 3, 4].map(() => api.tenant())))];
          const answers = await race(5, () =>
            Promise.all(tenants.map((x) => x.api.post('/v1/domains', { domain: name }))),
          );
          expect(answers.map((r) => r.status).sort(), answers.map((r) => r.text).join('\n')).to.deep.equal([
            201, 409, 409, 409, 409,
          ]);
          for (const r of answers.filter((x) => x.status === 409)) expectError(r, 409, 'domain_already_registered');
          const holders = await db()
            .store.knex('domains')
            .where({ name })
            .select<Array<{ project_id: string }>>('project_id');
          expect(holders).to.have.length(1);
        });
      }

      it('never lets concurrent creations take a project past its domain limit', async function () {
        const limited = await api.tenant();
        await setProject(api.deps, limited.project.id, { limits: { domains: 2 } });
        const answers = await race(5, () =>
          Promise.all([1, 2, 3, 4, 5].map(() => limited.api.post('/v1/domains', { domain: uniqueDomain() }))),
        );
        expect(answers.map((r) => r.status).sort(), answers.map((r) => r.text).join('\n')).to.deep.equal([
          201, 201, 403, 403, 403,
        ]);
        for (const r of answers.filter((x) => x.status === 403)) expectError(r, 403, 'plan_limit_reached');
        expect((await limited.api.get('/v1/domains')).body.data).to.have.length(2);
      });
    });
  });

  describe('verification (LIFECYCLE Domain)', function () {
    it('pending → verified once the three CNAMEs are published; temporary_failure when one goes; verified when it is back', async function () {
      const d = (await t.api.post('/v1/domains', { domain: uniqueDomain() })).body;
      const pending = await t.api.post(`/v1/domains/${d.id}/verify`);
      expect(pending.status).to.equal(200);
      expect(pending.body.status).to.equal('pending');
      expect(pending.body.failure_reason).to.include(`ph1._domainkey.${d.domain}`);
      expect(pending.body.records.filter((r: Rec) => r.required).map((r: Rec) => r.dns)).to.deep.equal([
        'missing',
        'missing',
        'missing',
      ]);
      expect(pending.body.dns_summary).to.deep.equal({ required_total: 3, required_found: 0, checked: true });

      publish(world, d.records, (r) => r.required);
      const verified = (await t.api.post(`/v1/domains/${d.id}/verify`)).body;
      expect(verified.status).to.equal('verified');
      expect(verified.verified_at).to.be.a('string');
      expect(verified.failure_reason).to.equal(null);
      expect(verified.dns_summary.required_found).to.equal(3);
      expect(verified.records.filter((r: Rec) => r.required).every((r: Rec) => r.dns === 'found')).to.equal(true);
      expect(verified.records.filter((r: Rec) => !r.required).map((r: Rec) => r.dns)).to.deep.equal([
        'missing',
        'missing',
        'missing',
      ]);

      world.remove(d.records[1].name, 'CNAME');
      await recheckDomains(api.deps, (_d, e) => {
        throw e;
      });
      const lost = (await t.api.get(`/v1/domains/${d.id}`)).body;
      expect(lost.status).to.equal('temporary_failure');
      expect(lost.failure_reason).to.include(d.records[1].name);
      expect(lost.records[1].dns).to.equal('missing');

      publish(world, [d.records[1]]);
      const back = (await t.api.post(`/v1/domains/${d.id}/verify`)).body;
      expect(back.status).to.equal('verified');
    });

    it('reports mismatch for CNAMEs pointing elsewhere, and stays pending', async function () {
      const d = (await t.api.post('/v1/domains', { domain: uniqueDomain() })).body;
      publish(
        world,
        d.records.filter((r: Rec) => r.required).map((r: Rec) => ({ ...r, value: 'selector.elsewhere.example' })),
      );
      const res = (await t.api.post(`/v1/domains/${d.id}/verify`)).body;
      expect(res.status).to.equal('pending');
      expect(res.records.filter((r: Rec) => r.required).map((r: Rec) => r.dns)).to.deep.equal([
        'mismatch',
        'mismatch',
        'mismatch',
      ]);
      expect(res.failure_reason).to.include('mismatch');
    });

    it('reports mismatch for a return-path MX and an SPF record that name another host', async function () {
      const d = (await t.api.post('/v1/domains', { domain: uniqueDomain() })).body;
      publish(world, d.records, (r) => r.required);
      const rp = `send.${d.domain}`;
      world.add(rp, 'MX', { exchange: 'mx.elsewhere.example', priority: 10 });
      world.add(rp, 'TXT', 'v=spf1 include:_spf.elsewhere.example -all');
      const res = (await t.api.post(`/v1/domains/${d.id}/verify`)).body;
      expect(res.status).to.equal('verified');
      expect(res.records.filter((r: Rec) => !r.required).map((r: Rec) => [r.purpose, r.dns])).to.deep.equal([
        ['return_path', 'mismatch'],
        ['spf', 'mismatch'],
        ['dmarc', 'missing'],
      ]);
      expect((await t.api.get(`/v1/domains/${d.id}/insights`)).body.setup.spf_return_path).to.equal('missing');
    });

    it('drops what it saw at the old return path when a PATCH moves the return path during the lookups', async function () {
      const d = (await t.api.post('/v1/domains', { domain: uniqueDomain() })).body;
      publish(world, d.records);
      const gate = world.hold(`send.${d.domain}`);
      const verifying = t.api.post(`/v1/domains/${d.id}/verify`);
      try {
        await gate.reached;
        expect((await t.api.patch(`/v1/domains/${d.id}`, { custom_return_path: 'mail' })).status).to.equal(200);
      } finally {
        gate.release();
      }
      const res = (await verifying).body;
      expect(res.status).to.equal('verified');
      expect(res.custom_return_path).to.equal('mail');
      const mailFrom = (x: { records: Rec[] }) =>
        x.records.filter((r) => r.purpose === 'return_path' || r.purpose === 'spf').map((r) => [r.name, r.dns]);
      // found at send.<domain>, which is no longer the return path: nothing is known about mail.<domain> yet
      expect(mailFrom(res)).to.deep.equal([
        [`mail.${d.domain}`, 'unchecked'],
        [`mail.${d.domain}`, 'unchecked'],
      ]);
      expect((await t.api.get(`/v1/domains/${d.id}/insights`)).body.setup.spf_return_path).to.equal('missing');
      expect(mailFrom((await t.api.post(`/v1/domains/${d.id}/verify`)).body)).to.deep.equal([
        [`mail.${d.domain}`, 'missing'],
        [`mail.${d.domain}`, 'missing'],
      ]);
    });

    context('when DNS does not answer', function () {
      let silent: Socket;
      let refusedPort: number;
      before(async function () {
        silent = await silentUdp();
        refusedPort = await closedUdpPort();
      });
      after(function () {
        silent.close();
      });
      const through = (server: () => string): DomainDeps => ({
        ...api.deps,
        resolver: createResolver({ servers: [server()], timeoutMs: 200, tries: 1 }),
        domains: { ...api.deps.domains, checkTimeoutMs: 1000 },
      });
      const resolvers: Array<[string, () => DomainDeps]> = [
        ['times out', () => through(() => `127.0.0.1:${silent.address().port}`)],
        ['refuses', () => through(() => `127.0.0.1:${refusedPort}`)],
      ];
      for (const [how, deps] of resolvers) {
        it(`keeps the status and says which records could not be checked when the resolver ${how}`, async function () {
          const fresh = (await t.api.post('/v1/domains', { domain: uniqueDomain() })).body;
          const pending = await verifyDomain(deps(), await getDomain(api.deps, t.project.id, fresh.id));
          expect(pending.status).to.equal('pending');
          expect(pending.failureReason).to.match(
            /^DNS lookups failed \(.+\), so these required records could not be checked: /,
          );
          expect(pending.failureReason).to.not.include('not found');
          for (const r of fresh.records.filter((x: Rec) => x.required))
            expect(pending.failureReason).to.include(`${r.name} (CNAME)`);
          expect(
            (await t.api.get(`/v1/domains/${fresh.id}`)).body.records.every((r: Rec) => r.dns === 'unchecked'),
          ).to.equal(true);

          const d = (await t.api.post('/v1/domains', { domain: uniqueDomain() })).body;
          publish(world, d.records, (r) => r.required);
          expect((await t.api.post(`/v1/domains/${d.id}/verify`)).body.status).to.equal('verified');
          const still = await verifyDomain(deps(), await getDomain(api.deps, t.project.id, d.id));
          expect(still.status).to.equal('verified');
          expect(still.failureReason).to.equal(null);

          world.remove(d.records[0].name, 'CNAME');
          const lost = (await t.api.post(`/v1/domains/${d.id}/verify`)).body;
          expect(lost.status).to.equal('temporary_failure');
          const unknown = await verifyDomain(deps(), await getDomain(api.deps, t.project.id, d.id));
          expect(unknown.status).to.equal('temporary_failure');
          expect(unknown.failureReason).to.match(/^DNS lookups failed/);
          expect(unknown.failureReason).to.include(`${d.records[0].name} (CNAME)`);
        });
      }
    });

    it('finds the recommended records and the DMARC policy', async function () {
      const d = (await t.api.post('/v1/domains', { domain: uniqueDomain() })).body;
      publish(world, d.records);
      const res = (await t.api.post(`/v1/domains/${d.id}/verify`)).body;
      expect(res.records.map((r: Rec) => r.dns)).to.deep.equal(['found', 'found', 'found', 'found', 'found', 'found']);
      const insights = (await t.api.get(`/v1/domains/${d.id}/insights`)).body;
      const { dkim_key, blocklisted, ...setup } = insights.setup;
      expect(blocklisted).to.deep.equal([]);
      expect(setup).to.deep.equal({
        dkim: 'verified',
        spf_return_path: 'aligned',
        dmarc: 'monitoring',
        tracking: { opens: false, clicks: false },
      });
      // the signing key and its next rotation: dkim.rotate_after (180 days by default) after the domain's creation
      expect(dkim_key.active_selector).to.equal('ph1');
      expect(Date.parse(dkim_key.next_rotation_at) - Date.parse(d.created_at)).to.equal(180 * 86_400_000);
    });

    it('reads p=reject as an enforced DMARC policy', async function () {
      const d = (await t.api.post('/v1/domains', { domain: uniqueDomain() })).body;
      publish(world, d.records, (r) => r.purpose !== 'dmarc');
      world.add(`_dmarc.${d.domain}`, 'TXT', 'v=DMARC1; p=reject; rua=mailto:dmarc@example.test');
      const res = (await t.api.post(`/v1/domains/${d.id}/verify`)).body;
      expect(res.records.find((r: Rec) => r.purpose === 'dmarc').dns).to.equal('found');
      const insights = (await t.api.get(`/v1/domains/${d.id}/insights`)).body;
      expect(insights.setup.dmarc).to.equal('enforced');
      expect(insights.recommendations.map((r: { code: string }) => r.code)).to.not.include.members([
        'dmarc_missing',
        'dmarc_not_enforced',
      ]);
    });

    it('gives up on a domain still pending 72 hours after creation, and verifies it later on request', async function () {
      const d = (await t.api.post('/v1/domains', { domain: uniqueDomain() })).body;
      const later = { ...api.deps, clock: { now: () => Date.now() + PENDING_GIVE_UP_MS + 1000 } };
      await recheckDomains(later, (_d, e) => {
        throw e;
      });
      const failed = (await t.api.get(`/v1/domains/${d.id}`)).body;
      expect(failed.status).to.equal('failed');
      expect(failed.failure_reason).to.include('ph1._domainkey');
      publish(world, d.records, (r) => r.required);
      expect((await t.api.post(`/v1/domains/${d.id}/verify`)).body.status).to.equal('verified');
    });
  });

  describe('PATCH, DELETE, list', function () {
    it('changes tracking under both spellings, TLS and the return path, and reports tracking availability', async function () {
      const d = (await t.api.post('/v1/domains', { domain: uniqueDomain() })).body;
      const a = await t.api.patch(`/v1/domains/${d.id}`, { track_opens: true, click_tracking: true, tls: 'enforced' });
      expect(a.status, a.text).to.equal(200);
      expect(a.body.tracking).to.deep.equal({ opens: true, clicks: true, available: true });
      expect(a.body.tls).to.equal('enforced');
      const b = await t.api.patch(`/v1/domains/${d.id}`, {
        open_tracking: false,
        track_clicks: false,
        custom_return_path: 'mail',
      });
      expect(b.body.tracking).to.deep.equal({ opens: false, clicks: false, available: true });
      expect(b.body.records.find((r: Rec) => r.purpose === 'spf').name).to.equal(`mail.${d.domain}`);
      expect((await t.api.get(`/v1/domains/${d.id}`)).body.custom_return_path).to.equal('mail');
    });

    for (const [body, field] of [
      [{ colour: 'blue' }, 'colour'],
      [{ tls: 'always' }, 'tls'],
      [{ custom_return_path: 'UPPER' }, 'custom_return_path'],
      [{ track_opens: 1 }, 'track_opens'],
      [{ track_opens: true, open_tracking: false }, 'track_opens'],
    ] as const) {
      it(`PATCH answers 400 naming ${field} for ${JSON.stringify(body)}`, async function () {
        const d = (await t.api.post('/v1/domains', { domain: uniqueDomain() })).body;
        expectError(await t.api.patch(`/v1/domains/${d.id}`, body), 400, 'validation_error', field);
      });
    }

    it("lists the project's domains and deletes one", async function () {
      const d = (await t.api.post('/v1/domains', { domain: uniqueDomain() })).body;
      const list = await t.api.get('/v1/domains');
      expect(list.status).to.equal(200);
      expect(list.body.data.map((x: { id: string }) => x.id)).to.include(d.id);
      const del = await t.api.delete(`/v1/domains/${d.id}`);
      expect(del.status).to.equal(200);
      expectError(await t.api.get(`/v1/domains/${d.id}`), 404, 'not_found');
      expect((await t.api.get('/v1/domains')).body.data.map((x: { id: string }) => x.id)).to.not.include(d.id);
      // the name is free again
      expect((await t.api.post('/v1/domains', { domain: d.domain })).status).to.equal(201);
    });

    it("answers 404 for another project's domain on every route", async function () {
      const d = (await t.api.post('/v1/domains', { domain: uniqueDomain() })).body;
      const other = await api.tenant();
      expectError(await other.api.get(`/v1/domains/${d.id}`), 404, 'not_found');
      expectError(await other.api.patch(`/v1/domains/${d.id}`, { tls: 'enforced' }), 404, 'not_found');
      expectError(await other.api.post(`/v1/domains/${d.id}/verify`), 404, 'not_found');
      expectError(await other.api.get(`/v1/domains/${d.id}/insights`), 404, 'not_found');
      expectError(await other.api.delete(`/v1/domains/${d.id}`), 404, 'not_found');
      expect((await other.api.get('/v1/domains')).body.data.map((x: { id: string }) => x.id)).to.not.include(d.id);
      expect((await t.api.get(`/v1/domains/${d.id}`)).body.tls).to.equal('opportunistic');
    });
  });

  describe('GET /v1/domains/{id}/insights (interface §2.3)', function () {
    it('answers 400 for days 0 and 91, and a zero report in shape by default', async function () {
      const d = (await t.api.post('/v1/domains', { domain: uniqueDomain() })).body;
      expectError(await t.api.get(`/v1/domains/${d.id}/insights?days=0`), 400, 'validation_error', 'days');
      expectError(await t.api.get(`/v1/domains/${d.id}/insights?days=91`), 400, 'validation_error', 'days');
      expectError(await t.api.get(`/v1/domains/${d.id}/insights?days=x`), 400, 'validation_error', 'days');
      const res = await t.api.get(`/v1/domains/${d.id}/insights`);
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ object: 'domain_insights', domain: d.domain, window_days: 30 });
      expect(res.body.totals).to.deep.equal({
        messages: 0,
        sent: 0,
        delivered: 0,
        bounced: 0,
        complained: 0,
        failed: 0,
        suppressed: 0,
        opened: 0,
        clicked: 0,
      });
      expect(res.body.rates).to.deep.equal({ delivered: 0, bounced: 0, complained: 0, opened: null, clicked: null });
      expect(res.body.setup).to.deep.include({
        dkim: 'pending',
        spf_return_path: 'missing',
        dmarc: 'missing',
        tracking: { opens: false, clicks: false },
      });
      expect(res.body.recommendations.map((r: { code: string }) => r.code)).to.include.members([
        'dkim_pending',
        'dmarc_missing',
      ]);
    });

    it("counts the window's live mail only and flags a high bounce rate", async function () {
      const d = (await t.api.post('/v1/domains', { domain: uniqueDomain(), open_tracking: true })).body;
      publish(world, d.records);
      await t.api.post(`/v1/domains/${d.id}/verify`);
      const rcpt = (status: RecipientStatus) => [
        {
          id: `rcp_${status}${Math.random().toString(36).slice(2)}`,
          address: `${status}@x.test`,
          kind: 'to' as const,
          status,
          details: null,
          queueRowId: null,
          delayNotified: false,
          updatedAt: Date.now(),
        },
      ];
      const live = {
        environment: 'live' as const,
        fromDomain: d.domain,
        from: `a@${d.domain}`,
        status: 'accepted' as const,
      };
      for (let i = 0; i < 8; i++)
        await storedEmail(db().store, t.project.id, { ...live, recipients: rcpt('delivered') });
      await storedEmail(db().store, t.project.id, { ...live, recipients: rcpt('bounced') });
      await storedEmail(db().store, t.project.id, { ...live, recipients: rcpt('complained') });
      await storedEmail(db().store, t.project.id, { ...live, status: 'failed', recipients: rcpt('failed') });
      // not counted: test mail, another domain, older than the window
      await storedEmail(db().store, t.project.id, { ...live, environment: 'test', recipients: rcpt('bounced') });
      await storedEmail(db().store, t.project.id, {
        ...live,
        fromDomain: 'other.example',
        recipients: rcpt('bounced'),
      });
      await storedEmail(db().store, t.project.id, {
        ...live,
        createdAt: Date.now() - 3 * 86_400_000,
        recipients: rcpt('bounced'),
      });
      const res = (await t.api.get(`/v1/domains/${d.id}/insights?days=2`)).body;
      expect(res.totals).to.deep.equal({
        messages: 11,
        sent: 10,
        delivered: 9,
        bounced: 1,
        complained: 1,
        failed: 1,
        suppressed: 0,
        opened: 0,
        clicked: 0,
      });
      expect(res.rates.bounced).to.be.closeTo(1 / 11, 1e-9);
      expect(res.rates.delivered).to.be.closeTo(9 / 11, 1e-9);
      expect(res.rates.complained).to.be.closeTo(1 / 9, 1e-9);
      expect(res.rates.opened).to.equal(0);
      expect(res.rates.clicked).to.equal(null);
      expect(res.status).to.equal('at_risk');
      const codes = res.recommendations.map((r: { code: string; level: string }) => `${r.code}:${r.level}`);
      expect(codes).to.include.members(['bounce_rate_high:critical', 'complaint_rate_high:critical']);
      // the same per UTC day, for the dashboard's charts, with the thresholds they are drawn against
      expect(res.daily.map((x: { date: string }) => x.date)).to.deep.equal([
        new Date(Date.now() - 86_400_000).toISOString().slice(0, 10),
        new Date().toISOString().slice(0, 10),
      ]);
      expect(res.daily[0]).to.deep.include({ recipients: 0, delivered: 0, bounce_rate: 0 });
      expect(res.daily[1]).to.deep.include({ recipients: 11, delivered: 9, bounced: 1, complained: 1, failed: 1 });
      expect(res.daily[1].bounce_rate).to.be.closeTo(1 / 11, 1e-9);
      expect(res.thresholds).to.deep.equal({
        bounce_rate: { watch: 0.02, at_risk: 0.05 },
        complaint_rate: { watch: 0.001, at_risk: 0.003 },
      });
    });

    it('counts a recipient who opens three times and clicks twice once each, so the rates stay within 0..1', async function () {
      const d = (await t.api.post('/v1/domains', { domain: uniqueDomain(), open_tracking: true, click_tracking: true }))
        .body;
      const e = await storedEmail(db().store, t.project.id, {
        environment: 'live',
        fromDomain: d.domain,
        from: `a@${d.domain}`,
        status: 'accepted',
        recipients: [
          {
            id: `rcp_open${Date.now()}`,
            address: 'reader@x.test',
            kind: 'to',
            status: 'delivered',
            details: null,
            queueRowId: null,
            delayNotified: false,
            updatedAt: Date.now(),
          },
        ],
      });
      const rcpt = { emailId: e.id, recipientId: e.recipients[0].id };
      for (let i = 0; i < 3; i++) await recordTracking(api.deps.tracking, { kind: 'open', ...rcpt }, 'Mail/1.0');
      for (let i = 0; i < 2; i++)
        await recordTracking(api.deps.tracking, { kind: 'click', ...rcpt, url: 'https://example.test/' }, 'Mail/1.0');
      const res = (await t.api.get(`/v1/domains/${d.id}/insights`)).body;
      expect(res.totals).to.include({ delivered: 1, opened: 1, clicked: 1 });
      expect(res.rates.opened).to.equal(1);
      expect(res.rates.clicked).to.equal(1);
    });

    it('says the return path is missing when its MX is published but its SPF record is not', async function () {
      const d = (await t.api.post('/v1/domains', { domain: uniqueDomain() })).body;
      publish(world, d.records, (r) => r.purpose !== 'spf');
      const res = (await t.api.post(`/v1/domains/${d.id}/verify`)).body;
      expect(
        res.records.filter((r: Rec) => r.purpose === 'return_path' || r.purpose === 'spf').map((r: Rec) => r.dns),
      ).to.deep.equal(['found', 'missing']);
      const insights = (await t.api.get(`/v1/domains/${d.id}/insights`)).body;
      expect(insights.setup.spf_return_path).to.equal('missing');
      expect(insights.recommendations.map((r: { code: string }) => r.code)).to.include('return_path_not_aligned');
    });

    context('when the platform cannot serve tracking (http.public_url null)', function () {
      let untracked: TestApi;
      before(async function () {
        untracked = await startTestApi(db().store, {
          dns: { resolvers: [world.address], zone: 'dkim.appliance.test' },
          outbound: { hostname: 'mta.appliance.test' },
          http: { public_url: null },
        });
      });
      after(async function () {
        await untracked.stop();
      });

      it('reports null open and click rates although the domain asks for tracking', async function () {
        const u = await untracked.tenant();
        const created = await u.api.post('/v1/domains', {
          domain: uniqueDomain(),
          open_tracking: true,
          click_tracking: true,
        });
        expect(created.body.tracking).to.deep.equal({ opens: true, clicks: true, available: false });
        const d = created.body;
        await storedEmail(db().store, u.project.id, {
          environment: 'live',
          fromDomain: d.domain,
          from: `a@${d.domain}`,
          status: 'accepted',
          recipients: [
            {
              id: `rcp_nt${Date.now()}`,
              address: 'reader@x.test',
              kind: 'to',
              status: 'delivered',
              details: null,
              queueRowId: null,
              delayNotified: false,
              updatedAt: Date.now(),
            },
          ],
        });
        const res = (await u.api.get(`/v1/domains/${d.id}/insights`)).body;
        expect(res.totals.delivered).to.equal(1);
        expect(res.rates.opened).to.equal(null);
        expect(res.rates.clicked).to.equal(null);
        expect(res.setup.tracking).to.deep.equal({ opens: false, clicks: false });
      });
    });
  });
});
