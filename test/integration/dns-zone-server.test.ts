import { expect } from 'chai';
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import dns2 from 'dns2';
import { freshSqlite, type TestDatabase } from '../helpers/databases.js';
import { startDnsWorld, type DnsWorld } from '../helpers/dns-world.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createResolver } from '../../src/dns/resolver.js';
import { startZoneServer, type ZoneServer } from '../../src/dns/zone-server.js';
import { domainKeys } from '../../src/modules/domains/domains.repo.js';

describe('the built-in DNS zone for DKIM keys', function () {
  let db: TestDatabase;
  let world: DnsWorld;
  let api: TestApi;
  before(async function () {
    db = freshSqlite();
    await db.store.migrateLatest();
    world = await startDnsWorld();
    api = await startTestApi(db.store, { dns: { resolvers: [world.address], zone: 'dkim.zone.test', server: { enabled: true, host: '127.0.0.1', port: 0 } }, outbound: { hostname: 'ns.zone.test' } }, { roles: { dns: true } });
    world.delegate('dkim.zone.test', '127.0.0.1', api.running.dnsPort!);
  });
  after(async function () {
    await api.stop();
    await world.stop();
    await db.drop();
  });

  it('answers the TXT behind each CNAME with a key that verifies signatures made with the stored private key', async function () {
    const t = await api.tenant();
    const d = (await t.api.post('/v1/domains', { domain: 'keys.example.test' })).body;
    const cnames = d.records.filter((r: { required: boolean }) => r.required);
    for (const r of cnames) world.add(r.name, 'CNAME', r.value);
    const resolver = createResolver({ servers: [world.address] });
    const stored = await domainKeys(db.store.knex, d.id);
    expect(stored).to.have.length(3);
    for (const r of cnames) {
      const selector = r.name.split('.')[0];
      const txt = (await resolver.resolveTxt(r.name)).map((parts) => parts.join(''));
      expect(txt).to.have.length(1);
      expect(txt[0]).to.match(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/=]+$/);
      const publicKey = createPublicKey({ key: Buffer.from(txt[0]!.split('p=')[1]!, 'base64'), format: 'der', type: 'spki' });
      const privateKey = createPrivateKey(stored.find((k) => k.selector === selector)!.privateKeyPem);
      const signature = sign('sha256', Buffer.from('proof'), privateKey);
      expect(verify('sha256', Buffer.from('proof'), publicKey, signature)).to.equal(true);
    }
  });

  it('answers NOERROR without records for <token>.<zone>, which has the keys below it (RFC 8020)', async function () {
    const t = await api.tenant();
    const d = (await t.api.post('/v1/domains', { domain: 'ent.example.test' })).body;
    const token = d.records[0].value.split('.')[1];
    const zone = dns2.UDPClient({ dns: '127.0.0.1', port: api.running.dnsPort! });
    const ent = await zone(`${token}.dkim.zone.test`, 'TXT');
    expect(ent.header.rcode).to.equal(0);
    expect(ent.answers).to.have.length(0);
    expect((await zone('0123456789abcdef0123.dkim.zone.test', 'TXT')).header.rcode).to.equal(3);
  });

  describe('on the wire', function () {
    let zone: ZoneServer;
    const keys = new Map([['s1.tok1', 'QUJD'.repeat(100)]]);
    let fail = false;
    before(async function () {
      zone = await startZoneServer({
        zone: 'dkim.wire.test',
        nameserver: 'ns.wire.test',
        host: '127.0.0.1',
        port: 0,
        lookup: async (token, selector) => {
          if (fail) throw new Error('database down');
          if (selector === null) return [...keys].find(([k]) => k.endsWith(`.${token}`))?.[1] ?? null;
          return keys.get(`${selector}.${token}`) ?? null;
        },
      });
    });
    after(async () => zone.stop());

    const udp = () => dns2.UDPClient({ dns: '127.0.0.1', port: zone.port });
    const tcp = () => dns2.TCPClient({ dns: '127.0.0.1', port: zone.port });

    it('serves a long TXT in 255-byte strings, over UDP and TCP, case-insensitively', async function () {
      for (const client of [udp(), tcp()]) {
        const res = await client('S1.TOK1.dkim.wire.test', 'TXT');
        expect(res.header.aa).to.equal(1);
        const data = (res.answers[0] as unknown as { data: string[] }).data;
        expect(data.every((s) => Buffer.byteLength(s) <= 255)).to.equal(true);
        expect(data.join('')).to.equal(`v=DKIM1; k=rsa; p=${'QUJD'.repeat(100)}`);
      }
    });

    it('answers SOA and NS at the apex, over UDP and TCP', async function () {
      for (const client of [udp(), tcp()]) {
        const soa = await client('dkim.wire.test', 'SOA');
        expect(soa.header.rcode).to.equal(0);
        expect(soa.header.aa).to.equal(1);
        expect((soa.answers[0] as unknown as { primary: string }).primary).to.equal('ns.wire.test');
        const ns = await client('dkim.wire.test', 'NS');
        expect(ns.header.rcode).to.equal(0);
        expect((ns.answers[0] as unknown as { ns: string }).ns).to.equal('ns.wire.test');
      }
    });

    it('answers NOERROR with no answers and the SOA for a token, an empty non-terminal (RFC 8020)', async function () {
      for (const type of ['TXT', 'A', 'CNAME']) {
        const res = await udp()('tok1.dkim.wire.test', type);
        expect(res.header.rcode, type).to.equal(0);
        expect(res.answers, type).to.have.length(0);
        expect((res.authorities[0] as unknown as { type: number; primary: string }).primary).to.equal('ns.wire.test');
      }
    });

    it('answers NXDOMAIN for unknown names in the zone and REFUSED outside it', async function () {
      expect((await udp()('s9.tok1.dkim.wire.test', 'TXT')).header.rcode).to.equal(3);
      expect((await udp()('tok9.dkim.wire.test', 'TXT')).header.rcode).to.equal(3);
      expect((await udp()('x.s1.tok1.dkim.wire.test', 'TXT')).header.rcode).to.equal(3);
      expect((await udp()('example.com', 'A')).header.rcode).to.equal(5);
    });

    it('answers SERVFAIL when the key store fails, and keeps serving', async function () {
      fail = true;
      expect((await udp()('s1.tok1.dkim.wire.test', 'TXT')).header.rcode).to.equal(2);
      fail = false;
      expect((await udp()('s1.tok1.dkim.wire.test', 'TXT')).header.rcode).to.equal(0);
    });
  });
});
