import dns2 from 'dns2';
import { listenDns, type DnsListener } from '../../src/dns/listen.js';

const { Packet } = dns2;
// dns2's typings omit the RCODE table that its Packet carries
const RCODE = (Packet as unknown as { RCODE: { NOERROR: number; FORMERR: number; SERVFAIL: number; NXDOMAIN: number } })
  .RCODE;
type Resource = Record<string, unknown> & { name: string; type: number };

const norm = (n: string) => n.trim().replace(/\.$/, '').toLowerCase();
const inZone = (name: string, zone: string) => name === zone || name.endsWith(`.${zone}`);

type Rec =
  | { type: 'A' | 'AAAA'; address: string }
  | { type: 'CNAME'; target: string }
  | { type: 'PTR'; target: string }
  | { type: 'MX'; exchange: string; priority: number }
  | { type: 'TXT'; data: string[] }
  | { type: 'TLSA'; rdata: Buffer };

/** RFC 6698 §7.1: TLSA's type code, which dns2 has no name for */
const TYPE_TLSA = 52;
const typeCode = (t: Rec['type']): number => (t === 'TLSA' ? TYPE_TLSA : Packet.TYPE[t]);

/** A TLSA record's RDATA from its presentation form, "3 1 1 <hex>" (RFC 6698 §2.2). */
function tlsaRdata(text: string): Buffer {
  const m = /^(\d+)\s+(\d+)\s+(\d+)\s+([0-9a-fA-F\s]+)$/.exec(text.trim());
  if (!m) throw new Error(`dns-world: "${text}" is not a TLSA record ("usage selector type hex")`);
  return Buffer.concat([Buffer.from([+m[1], +m[2], +m[3]]), Buffer.from(m[4].replace(/\s/g, ''), 'hex')]);
}

/** TXT strings are at most 255 bytes each (RFC 1035 §3.3.14). */
export function chunkTxt(s: string): string[] {
  const b = Buffer.from(s, 'utf8');
  const out: string[] = [];
  for (let i = 0; i < b.length; i += 255) out.push(b.subarray(i, i + 255).toString('utf8'));
  return out.length ? out : [''];
}

/**
 * "Public DNS" for tests, on 127.0.0.1 (UDP and TCP): records added by the
 * test, CNAMEs chased like a recursive resolver, and zones delegated to
 * another server (the appliance's DKIM zone) forwarded there.
 */
export class DnsWorld {
  private readonly records = new Map<string, Rec[]>();
  private readonly delegations = new Map<string, { host: string; port: number }>();
  private readonly holds = new Map<string, { arrived(): void; released: Promise<void> }>();
  /** zones whose answers are authenticated (AD) to queries that ask (AD or DO) */
  private readonly signed = new Set<string>();
  /** names (and types) answered SERVFAIL, as a validating resolver answers a bogus zone */
  private readonly failing = new Set<string>();
  private listener: DnsListener | null = null;

  get port(): number {
    return this.listener!.port;
  }

  /** for dns.resolvers */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    this.listener = await listenDns(
      (request, send) => {
        const response = Packet.createResponseFromRequest(request);
        const q = request.questions[0];
        if (!q) {
          response.header.rcode = RCODE.FORMERR;
          send(response);
          return;
        }
        this.held(q.name)
          .then(() => this.resolve(q.name, q.type))
          .then(
            (r) => {
              response.header.rcode = r.rcode;
              response.header.ra = 1;
              if (r.rcode !== RCODE.SERVFAIL && this.authenticates(request, q.name))
                (response.header as { ad?: number }).ad = 1;
              response.answers = r.answers as unknown as typeof response.answers;
              send(response);
            },
            () => {
              response.header.rcode = RCODE.SERVFAIL;
              send(response);
            },
          );
      },
      '127.0.0.1',
      0,
    );
    return this;
  }

  async stop(): Promise<void> {
    await this.listener?.close();
  }

  add(
    name: string,
    type: 'A' | 'AAAA' | 'CNAME' | 'PTR' | 'MX' | 'TXT' | 'TLSA',
    value: string | string[] | { exchange: string; priority: number },
  ): void {
    const n = norm(name);
    const text = (): string => {
      if (typeof value === 'string') return value;
      throw new Error(`dns-world: a ${type} record for ${name} takes a string, not ${JSON.stringify(value)}`);
    };
    let rec: Rec;
    if (type === 'MX')
      rec =
        typeof value === 'object' && !Array.isArray(value)
          ? { type, exchange: norm(value.exchange), priority: value.priority }
          : { type, exchange: norm(text()), priority: 10 };
    else if (type === 'CNAME') rec = { type, target: norm(text()) };
    else if (type === 'PTR') rec = { type, target: norm(text()) };
    else if (type === 'TXT') rec = { type, data: Array.isArray(value) ? value : chunkTxt(text()) };
    else if (type === 'TLSA') rec = { type, rdata: tlsaRdata(text()) };
    else rec = { type, address: text() };
    this.records.set(n, [...(this.records.get(n) ?? []), rec]);
  }

  /** remove every record of the name, or only those of one type */
  remove(name: string, type?: Rec['type']): void {
    const n = norm(name);
    const left = type ? (this.records.get(n) ?? []).filter((r) => r.type !== type) : [];
    if (left.length) this.records.set(n, left);
    else this.records.delete(n);
  }

  /**
   * Keep every answer about `name` back until release(), to make a race
   * happen at a known point: `reached` settles when the first query arrives.
   */
  hold(name: string): { reached: Promise<void>; release(): void } {
    let arrived!: () => void;
    let release!: () => void;
    const reached = new Promise<void>((r) => (arrived = r));
    const released = new Promise<void>((r) => (release = r));
    this.holds.set(norm(name), { arrived, released });
    return {
      reached,
      release: () => {
        this.holds.delete(norm(name));
        release();
      },
    };
  }

  private async held(name: string): Promise<void> {
    const h = this.holds.get(norm(name));
    if (!h) return;
    h.arrived();
    await h.released;
  }

  /**
   * Answers about names in `zone` say they were validated (the AD bit, RFC 4035 §3.2.3), as a
   * validating resolver's do for a signed zone; only to queries that set AD (RFC 6840 §5.7).
   */
  sign(zone: string): void {
    this.signed.add(norm(zone));
  }

  /** Queries for `name` (of one type, or any) get SERVFAIL until unfail(). */
  fail(name: string, type?: Rec['type']): void {
    this.failing.add(`${norm(name)}|${type ? typeCode(type) : '*'}`);
  }

  unfail(name: string, type?: Rec['type']): void {
    this.failing.delete(`${norm(name)}|${type ? typeCode(type) : '*'}`);
  }

  private authenticates(request: { header: object }, qname: string): boolean {
    const name = norm(qname);
    return (request.header as { ad?: number }).ad === 1 && [...this.signed].some((z) => inZone(name, z));
  }

  delegate(zone: string, host: string, port: number): void {
    this.delegations.set(norm(zone), { host, port });
  }

  private async resolve(qname: string, qtype: number, depth = 0): Promise<{ rcode: number; answers: Resource[] }> {
    const name = norm(qname);
    if (depth > 8) return { rcode: RCODE.SERVFAIL, answers: [] };
    if (this.failing.has(`${name}|*`) || this.failing.has(`${name}|${qtype}`))
      return { rcode: RCODE.SERVFAIL, answers: [] };
    for (const [zone, to] of this.delegations) {
      if (inZone(name, zone)) {
        const typeName = Object.entries(Packet.TYPE).find(([, v]) => v === qtype)?.[0] ?? 'A';
        const res = await dns2.UDPClient({ dns: to.host, port: to.port })(name, typeName);
        return { rcode: res.header.rcode, answers: res.answers as unknown as Resource[] };
      }
    }
    const list = this.records.get(name);
    if (!list) {
      for (const k of this.records.keys()) if (k.endsWith(`.${name}`)) return { rcode: 0, answers: [] };
      return { rcode: RCODE.NXDOMAIN, answers: [] };
    }
    const base = (r: Rec) => ({ name, type: typeCode(r.type), class: Packet.CLASS.IN, ttl: 0 });
    const mk = (r: Rec): Resource => {
      switch (r.type) {
        case 'A':
        case 'AAAA':
          return { ...base(r), address: r.address };
        case 'CNAME':
        case 'PTR':
          return { ...base(r), domain: r.target };
        case 'MX':
          return { ...base(r), exchange: r.exchange, priority: r.priority };
        case 'TXT':
          return { ...base(r), data: r.data };
        case 'TLSA':
          // dns2 writes a type it has no encoder for from `data`, as raw RDATA
          return { ...base(r), data: r.rdata };
      }
    };
    const cname = list.find((r): r is Extract<Rec, { type: 'CNAME' }> => r.type === 'CNAME');
    if (cname && qtype !== Packet.TYPE.CNAME) {
      const sub = await this.resolve(cname.target, qtype, depth + 1);
      return { rcode: sub.rcode, answers: [mk(cname), ...sub.answers] };
    }
    return { rcode: 0, answers: list.filter((r) => typeCode(r.type) === qtype).map(mk) };
  }
}

export async function startDnsWorld(): Promise<DnsWorld> {
  return new DnsWorld().start();
}
