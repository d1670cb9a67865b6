import { expect } from 'chai';
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import dns2 from 'dns2';
import { freshSqlite, type TestDatabase } from '../helpers/databases.js';
import { startDnsWorld, type DnsWorld } from '../helpers/dns-world.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { waitFor } from '../helpers/wait.js';
import { createResolver } from '../../src/dns/resolver.js';
import { dkimTxtValue, startZoneServer, type ZoneServer, type ZoneServerOptions } from '../../src/dns/zone-server.js';
import { domainKeys } from '../../src/modules/deliverability/domains/domain-keys.repo.js';
import { dnsPacketsDropped } from '../../src/log/metrics.js';

const { Packet } = dns2;

/** A query's bytes: one TXT question, and an OPT record offering `edns` bytes when given. */
function queryBytes(id: number, name: string, edns?: number): Buffer {
  const q = new Packet();
  q.header.id = id;
  q.questions.push({ name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN } as never);
  // the OPT record's CLASS is the payload size it offers (RFC 6891 §6.1.2)
  if (edns) q.additionals.push({ ...Packet.Resource.EDNS([]), class: edns });
  return q.toBuffer();
}

/** RFC 1035 §4.2.2: a TCP message goes with its length in two bytes */
const frame = (m: Buffer) => Buffer.concat([Buffer.from([m.length >> 8, m.length & 0xff]), m]);

const dropped = async (reason: string) =>
  (await dnsPacketsDropped.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;

/** A small seeded generator, so that a failing case can be found again. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** A UDP socket on 127.0.0.1 that sends raw bytes to the zone and keeps every message that comes back. */
async function udpPeer(port: number) {
  const socket = createSocket('udp4');
  const received: Buffer[] = [];
  const waiting = new Map<number, () => void>();
  socket.on('message', (m: Buffer) => {
    received.push(m);
    waiting.get(m.readUInt16BE(0))?.();
  });
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', () => r()));
  return {
    received,
    /** the ids of the messages received */
    ids: () => received.map((m) => m.readUInt16BE(0)),
    send: (bytes: Buffer) => new Promise<void>((r) => socket.send(bytes, port, '127.0.0.1', () => r())),
    /** the answer with this id */
    answer: (id: number, timeoutMs = 5000) =>
      new Promise<InstanceType<typeof Packet>>((resolve, reject) => {
        const found = received.find((m) => m.readUInt16BE(0) === id);
        if (found) return resolve(Packet.parse(found));
        const timer = setTimeout(() => reject(new Error(`no answer with id ${id}`)), timeoutMs);
        waiting.set(id, () => {
          clearTimeout(timer);
          resolve(Packet.parse(received.find((m) => m.readUInt16BE(0) === id)!));
        });
      }),
    close: () => socket.close(),
  };
}

/** A TCP connection to the zone that keeps what it receives and notes when the server closed it. */
async function tcpPeer(port: number) {
  const socket: Socket = connect(port, '127.0.0.1');
  let data = Buffer.alloc(0);
  let closedAt: number | null = null;
  socket.on('data', (d: Buffer) => (data = Buffer.concat([data, d])));
  socket.on('error', () => undefined);
  const closed = new Promise<number>((r) => socket.on('close', () => r((closedAt = performance.now()))));
  await once(socket, 'connect');
  return {
    socket,
    data: () => data,
    closedAt: () => closedAt,
    /** resolves true when the server closed the connection within timeoutMs */
    closedWithin: (timeoutMs: number) =>
      Promise.race([closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), timeoutMs))]),
  };
}

/** The messages in a TCP byte stream. */
function unframe(data: Buffer): InstanceType<typeof Packet>[] {
  const out: InstanceType<typeof Packet>[] = [];
  for (let at = 0; at + 2 <= data.length; at += 2 + data.readUInt16BE(at))
    out.push(Packet.parse(data.subarray(at + 2, at + 2 + data.readUInt16BE(at))));
  return out;
}

describe('the built-in DNS zone for DKIM keys', function () {
  let db: TestDatabase;
  let world: DnsWorld;
  let api: TestApi;
  before(async function () {
    db = freshSqlite();
    await db.store.migrateLatest();
    world = await startDnsWorld();
    api = await startTestApi(
      db.store,
      {
        dns: {
          resolvers: [world.address],
          zone: 'dkim.zone.test',
          server: { enabled: true, host: '127.0.0.1', port: 0 },
        },
        outbound: { hostname: 'ns.zone.test' },
      },
      { roles: { dns: true } },
    );
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
      const publicKey = createPublicKey({
        key: Buffer.from(txt[0].split('p=')[1], 'base64'),
        format: 'der',
        type: 'spki',
      });
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

  describe('against hostile packets (issue 38)', function () {
    // 1400 characters: an answer longer than 1232 bytes and shorter than 4096
    const bigKey = 'QUJD'.repeat(350);
    const start = (limits?: ZoneServerOptions['limits']) =>
      startZoneServer({
        zone: 'dkim.hostile.test',
        nameserver: 'ns.hostile.test',
        host: '127.0.0.1',
        port: 0,
        lookup: async (token, selector) => (token !== 'tok1' ? null : selector === 'big' ? bigKey : 'QUJD'),
        limits,
      });
    const valid = (id: number) => queryBytes(id, 's1.tok1.dkim.hostile.test');
    let zone: ZoneServer;
    before(async () => (zone = await start()));
    after(async () => zone.stop());

    context('over UDP', function () {
      let peer: Awaited<ReturnType<typeof udpPeer>>;
      beforeEach(async () => (peer = await udpPeer(zone.port)));
      afterEach(() => peer.close());

      it('drops 13 bytes claiming 65,535 records per section unanswered, and answers a query sent right after within 100 ms', async function () {
        const before = await dropped('short');
        const claim = Buffer.from([0, 1, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0]);
        const started = performance.now();
        await peer.send(claim);
        await peer.send(valid(2));
        const res = await peer.answer(2);
        expect(performance.now() - started).to.be.below(100);
        expect(res.answers).to.have.length(1);
        expect(peer.ids()).to.deep.equal([2]);
        expect(await dropped('short')).to.equal(before + 1);
      });

      it('drops 200 random packets and answers a query sent after them, all within a second', async function () {
        const r = rng(38);
        const started = performance.now();
        for (let i = 0; i < 200; i++) {
          const m = Buffer.alloc(13 + Math.floor(r() * 500));
          for (let j = 0; j < m.length; j++) m[j] = Math.floor(r() * 256);
          // every other one with a query's flags and one question, the rest random
          if (i % 2) m.set([0x01, 0x00, 0, 1], 2);
          m.writeUInt16BE(1000 + i, 0);
          await peer.send(m);
          // the zone runs on this thread: let it read, or the socket's receive buffer overflows and drops
          if (i % 10 === 9) await new Promise((r) => setImmediate(r));
        }
        await peer.send(valid(2));
        const res = await peer.answer(2);
        expect(performance.now() - started).to.be.below(1000);
        expect(res.answers).to.have.length(1);
      });

      it('drops a question whose name points to itself, or loops back, unanswered, and answers the next query within 100 ms', async function () {
        const before = await dropped('name');
        const selfPointer = Buffer.from([0, 3, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 16, 0, 1]);
        const loop = Buffer.from([0, 4, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0x61, 0xc0, 12, 0, 16, 0, 1]);
        const started = performance.now();
        await peer.send(selfPointer);
        await peer.send(loop);
        await peer.send(valid(5));
        await peer.answer(5);
        expect(performance.now() - started).to.be.below(100);
        await new Promise((r) => setTimeout(r, 50));
        expect(peer.ids()).to.deep.equal([5]);
        expect(await dropped('name')).to.equal(before + 2);
      });

      it('answers at most 1232 bytes whatever the OPT record offers: a longer answer has TC set and comes whole over TCP', async function () {
        await peer.send(queryBytes(6, 'big.tok1.dkim.hostile.test', 4096));
        const res = await peer.answer(6);
        expect(peer.received[0].length).to.be.at.most(1232);
        expect(res.header.tc).to.equal(1);
        expect(res.answers).to.have.length(0);
        const whole = await dns2.TCPClient({ dns: '127.0.0.1', port: zone.port })('big.tok1.dkim.hostile.test', 'TXT');
        expect((whole.answers[0] as unknown as { data: string[] }).data.join('')).to.equal(dkimTxtValue(bigKey));
      });
    });

    context('over TCP', function () {
      it('closes a connection that sends an answer instead of a query, without answering it', async function () {
        const before = await dropped('response');
        const peer = await tcpPeer(zone.port);
        const notAQuery = valid(7);
        notAQuery[2] |= 0x80;
        peer.socket.write(frame(notAQuery));
        expect(await peer.closedWithin(1000)).to.equal(true);
        expect(peer.data().length).to.equal(0);
        expect(await dropped('response')).to.equal(before + 1);
      });

      it('closes a connection announcing a message longer than any query, before it arrives', async function () {
        const before = await dropped('oversize');
        const peer = await tcpPeer(zone.port);
        peer.socket.write(Buffer.from([0xff, 0xff, 0, 1, 1, 0]));
        expect(await peer.closedWithin(1000)).to.equal(true);
        expect(await dropped('oversize')).to.equal(before + 1);
      });

      context('with a short idle time', function () {
        let quiet: ZoneServer;
        before(async () => (quiet = await start({ tcpIdleMs: 300 })));
        after(async () => quiet.stop());

        it('closes a connection that sends nothing, and one that trickles a query a byte at a time', async function () {
          const started = performance.now();
          const idle = await tcpPeer(quiet.port);
          const trickle = await tcpPeer(quiet.port);
          const bytes = frame(valid(8));
          let sent = 0;
          const drip = setInterval(
            () => sent < bytes.length - 1 && trickle.socket.write(bytes.subarray(sent, ++sent)),
            50,
          );
          try {
            expect(await idle.closedWithin(3000)).to.equal(true);
            expect(await trickle.closedWithin(3000)).to.equal(true);
          } finally {
            clearInterval(drip);
          }
          expect(idle.closedAt()! - started).to.be.at.least(250);
          expect(trickle.data().length).to.equal(0);
        });

        it('answers queries pipelined on one connection, then closes it once idle', async function () {
          const peer = await tcpPeer(quiet.port);
          peer.socket.write(Buffer.concat([frame(valid(9)), frame(queryBytes(10, 'tok9.dkim.hostile.test'))]));
          expect(await peer.closedWithin(3000)).to.equal(true);
          const answers = unframe(peer.data());
          expect(answers.map((a) => [a.header.id, a.header.rcode])).to.have.deep.members([
            [9, 0],
            [10, 3],
          ]);
        });
      });

      it('refuses connections over the cap, and takes one again once a slot is free', async function () {
        const capped = await start({ maxTcpConnections: 4 });
        try {
          const open = await Promise.all([1, 2, 3, 4].map(() => tcpPeer(capped.port)));
          const before = await dropped('tcp_connections');
          const fifth = await tcpPeer(capped.port);
          expect(await fifth.closedWithin(1000)).to.equal(true);
          expect(await dropped('tcp_connections')).to.equal(before + 1);
          open[0].socket.destroy();
          const res = await waitFor(
            () => dns2.TCPClient({ dns: '127.0.0.1', port: capped.port })('s1.tok1.dkim.hostile.test', 'TXT'),
            2000,
            'a TCP answer',
          );
          expect(res.answers).to.have.length(1);
          for (const p of open) p.socket.destroy();
        } finally {
          await capped.stop();
        }
      });
    });
  });
});
