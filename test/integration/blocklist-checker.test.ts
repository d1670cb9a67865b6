import { expect } from 'chai';
import dns2 from 'dns2';
import { listenDns, type DnsListener } from '../../src/dns/listen.js';
import { createDnsblLookup } from '../../src/dns/dnsbl-lookup.js';
import {
  BlocklistChecker,
  type BlocklistCheckerOptions,
  type BlocklistResult,
} from '../../src/modules/deliverability/blocklists/blocklist-checker.js';
import type { Blocklist } from '../../src/modules/deliverability/blocklists/dnsbl.js';

const { Packet } = dns2;
// dns2's typings omit the RCODE table that its Packet carries
const RCODE = (Packet as unknown as { RCODE: { SERVFAIL: number; NXDOMAIN: number } }).RCODE;

interface Entry {
  a: string[];
  ttl: number;
  txt?: string;
}

/**
 * The lists, on 127.0.0.1 only: A and TXT records with their TTLs, zones
 * that answer SERVFAIL, zones that answer late, and a log of every question
 * with the time it arrived.
 */
class ListServer {
  readonly records = new Map<string, Entry>();
  readonly servfail = new Set<string>();
  readonly slow = new Map<string, number>();
  readonly seen: { name: string; type: number; at: number }[] = [];
  inFlight = 0;
  maxInFlight = 0;
  private listener: DnsListener | null = null;

  get address(): string {
    return `127.0.0.1:${this.listener!.port}`;
  }

  async start(): Promise<void> {
    this.listener = await listenDns(
      (request, send) => {
        const q = request.questions[0];
        const name = q.name.toLowerCase();
        this.seen.push({ name, type: q.type, at: performance.now() });
        const response = Packet.createResponseFromRequest(request);
        response.header.ra = 1;
        const zone = (set: Iterable<string>) => [...set].find((z) => name.endsWith(`.${z}`));
        const delay = this.slow.get(zone(this.slow.keys()) ?? '') ?? 0;
        this.inFlight++;
        this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
        setTimeout(() => {
          this.inFlight--;
          if (zone(this.servfail)) response.header.rcode = RCODE.SERVFAIL;
          else this.answer(name, q.type, response);
          send(response);
        }, delay);
      },
      '127.0.0.1',
      0,
    );
  }

  private answer(name: string, type: number, response: ReturnType<typeof Packet.createResponseFromRequest>): void {
    const entry = this.records.get(name);
    if (!entry) {
      response.header.rcode = RCODE.NXDOMAIN;
      return;
    }
    const base = { name, class: Packet.CLASS.IN, ttl: entry.ttl };
    const answers: Record<string, unknown>[] = [];
    if (type === Packet.TYPE.A) answers.push(...entry.a.map((address) => ({ ...base, type: Packet.TYPE.A, address })));
    if (type === Packet.TYPE.TXT && entry.txt) answers.push({ ...base, type: Packet.TYPE.TXT, data: [entry.txt] });
    response.answers = answers as unknown as typeof response.answers;
  }

  /** the A questions asked about `name` */
  asked(name: string): number {
    return this.seen.filter((s) => s.name === name && s.type === Packet.TYPE.A).length;
  }

  async stop(): Promise<void> {
    await this.listener?.close();
  }
}

const ipList: Blocklist = { zone: 'dnsbl.example.test', kind: 'ip' };
const broken: Blocklist = { zone: 'broken.example.test', kind: 'ip' };
const zen: Blocklist = { zone: 'zen.spamhaus.org', kind: 'ip' };
const dbl: Blocklist = { zone: 'dbl.spamhaus.org', kind: 'domain' };

describe('BlocklistChecker against a list server on 127.0.0.1', function () {
  let server: ListServer;
  let clock: { t: number; now(): number };
  const checker = (opts: Partial<BlocklistCheckerOptions> = {}) =>
    new BlocklistChecker({
      lookup: createDnsblLookup({ servers: [server.address], timeoutMs: 1000, tries: 1 }),
      clock,
      perSecond: 1000,
      ...opts,
    });
  const one = (results: BlocklistResult[], target: string, zone: string) =>
    results.find((r) => r.target === target && r.zone === zone)!;

  before(async function () {
    server = new ListServer();
    await server.start();
    server.records.set('10.2.0.192.dnsbl.example.test', { a: ['127.0.0.2'], ttl: 600, txt: 'seen sending spam' });
    server.records.set('10.2.0.192.zen.spamhaus.org', { a: ['127.0.0.4'], ttl: 60 });
    server.records.set('30.2.0.192.zen.spamhaus.org', { a: ['127.255.255.254'], ttl: 60, txt: 'open resolver' });
    server.records.set('5.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.dnsbl.example.test', {
      a: ['127.0.0.3'],
      ttl: 900,
    });
    server.records.set('spammy.example.dbl.spamhaus.org', {
      a: ['127.0.1.2'],
      ttl: 300,
      txt: 'https://www.spamhaus.org/query/domain/spammy.example',
    });
    server.servfail.add('broken.example.test');
    server.slow.set('slow.example.test', 150);
  });
  after(async () => server.stop());
  beforeEach(function () {
    clock = { t: 1_700_000_000_000, now: () => clock.t };
  });

  it('reports a listed IP with its code, TXT and TTL, a clear IP, and asks no list of the other kind', async function () {
    const results = await checker().check(['192.0.2.10', '192.0.2.20'], [ipList, dbl]);
    expect(results).to.deep.equal([
      {
        target: '192.0.2.10',
        kind: 'ip',
        zone: 'dnsbl.example.test',
        state: 'listed',
        codes: ['127.0.0.2'],
        reason: 'seen sending spam',
        checkedAt: clock.t,
        ttlSeconds: 600,
      },
      {
        target: '192.0.2.20',
        kind: 'ip',
        zone: 'dnsbl.example.test',
        state: 'clear',
        codes: [],
        checkedAt: clock.t,
        ttlSeconds: 3600,
      },
    ]);
    expect(server.seen.some((s) => s.name.endsWith('dbl.spamhaus.org'))).to.equal(false);
  });

  it('reports a listed domain on a domain list', async function () {
    const results = await checker().check(['Spammy.Example', 'clean.example'], [dbl, zen]);
    expect(results.map((r) => [r.target, r.zone, r.state])).to.deep.equal([
      ['spammy.example', 'dbl.spamhaus.org', 'listed'],
      ['clean.example', 'dbl.spamhaus.org', 'clear'],
    ]);
    expect(results[0]).to.deep.include({
      codes: ['127.0.1.2'],
      reason: 'https://www.spamhaus.org/query/domain/spammy.example',
      ttlSeconds: 300,
    });
  });

  it('asks an IPv6 target by its 32 nibbles', async function () {
    const [r] = await checker().check(['2001:db8::5'], [ipList]);
    expect(r).to.deep.include({ target: '2001:db8::5', state: 'listed', codes: ['127.0.0.3'], ttlSeconds: 900 });
  });

  it('reports a list answering SERVFAIL as an error and still answers with the others', async function () {
    const results = await checker().check(['192.0.2.10'], [broken, ipList, zen]);
    expect(one(results, '192.0.2.10', 'broken.example.test')).to.deep.include({
      state: 'error',
      codes: [],
      ttlSeconds: 300,
    });
    expect(one(results, '192.0.2.10', 'broken.example.test').reason).to.match(/SERVFAIL/);
    expect(one(results, '192.0.2.10', 'dnsbl.example.test').state).to.equal('listed');
    expect(one(results, '192.0.2.10', 'zen.spamhaus.org')).to.deep.include({
      state: 'listed',
      codes: ['127.0.0.4'],
      ttlSeconds: 300,
    });
  });

  it("reports Spamhaus's public-resolver code as an error saying what to do, and asks no TXT for it", async function () {
    const txtBefore = server.seen.filter((s) => s.type === Packet.TYPE.TXT && s.name.startsWith('30.2.0.192.')).length;
    const [r] = await checker().check(['192.0.2.30'], [zen]);
    expect(r).to.deep.include({ state: 'error', codes: ['127.255.255.254'], ttlSeconds: 300 });
    expect(r.reason).to.match(/refuses queries through this resolver.*own recursive resolver in dns\.resolvers/);
    expect(server.seen.filter((s) => s.type === Packet.TYPE.TXT && s.name.startsWith('30.2.0.192.')).length).to.equal(
      txtBefore,
    );
  });

  it('keeps each answer for its TTL: listed 600 s, NXDOMAIN an hour, an error 5 minutes', async function () {
    const c = checker();
    const names = ['10.2.0.192.dnsbl.example.test', '40.2.0.192.dnsbl.example.test', '10.2.0.192.broken.example.test'];
    const counts = () => names.map((n) => server.asked(n));
    const start = counts();
    const first = await c.check(['192.0.2.10', '192.0.2.40'], [ipList, broken]);
    expect(counts()).to.deep.equal(start.map((n) => n + 1));

    clock.t += 299_000;
    const again = await c.check(['192.0.2.10', '192.0.2.40'], [ipList, broken]);
    expect(counts(), 'within every TTL').to.deep.equal(start.map((n) => n + 1));
    expect(again).to.deep.equal(first);

    clock.t += 2_000; // 301 s: the error is due again
    await c.check(['192.0.2.10', '192.0.2.40'], [ipList, broken]);
    expect(counts()).to.deep.equal([start[0] + 1, start[1] + 1, start[2] + 2]);

    clock.t += 300_000; // 601 s: the listing too
    const later = await c.check(['192.0.2.10', '192.0.2.40'], [ipList]);
    expect(counts()).to.deep.equal([start[0] + 2, start[1] + 1, start[2] + 2]);
    expect(one(later, '192.0.2.10', 'dnsbl.example.test').checkedAt).to.equal(clock.t);

    clock.t += 3_000_000; // 3601 s: the NXDOMAIN too
    await c.check(['192.0.2.40'], [ipList]);
    expect(counts()[1]).to.equal(start[1] + 2);
  });

  it('asks once for a question two checks ask at the same time', async function () {
    const c = checker();
    const before = server.asked('50.2.0.192.dnsbl.example.test');
    await Promise.all([c.check(['192.0.2.50'], [ipList]), c.check(['192.0.2.50'], [ipList])]);
    expect(server.asked('50.2.0.192.dnsbl.example.test')).to.equal(before + 1);
  });

  it('keeps at most `concurrency` queries in flight', async function () {
    server.maxInFlight = 0;
    const targets = Array.from({ length: 8 }, (_, i) => `192.0.2.${100 + i}`);
    await checker({ concurrency: 2 }).check(targets, [{ zone: 'slow.example.test', kind: 'ip' }]);
    expect(server.maxInFlight).to.equal(2);
  });

  it('starts at most `perSecond` queries a second: 30 at 10/s take about 3 s', async function () {
    this.timeout(10_000);
    const targets = Array.from({ length: 30 }, (_, i) => `198.51.100.${i + 1}`);
    const from = server.seen.length;
    await checker({ perSecond: 10, concurrency: 4 }).check(targets, [ipList]);
    const at = server.seen
      .slice(from)
      .filter((s) => s.type === Packet.TYPE.A)
      .map((s) => s.at);
    expect(at).to.have.length(30);
    expect(at.at(-1)! - at[0]).to.be.at.least(2_700);
    // a few ms of slack for the loopback's jitter; without pacing all 30 arrive within a few ms
    const busiest = Math.max(...at.map((t) => at.filter((u) => u >= t && u < t + 990).length));
    expect(busiest).to.be.at.most(10);
  });
});
