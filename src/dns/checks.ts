import { isNoRecord, normalizeName, type DnsResolver } from './resolver.js';

export type RecordPurpose = 'dkim' | 'return_path' | 'spf' | 'dmarc';
/** LIFECYCLE `records[].dns` */
export type DnsState = 'unchecked' | 'found' | 'missing' | 'mismatch';

/** A DNS record a customer publishes, and what is needed to judge a lookup of it. */
export interface ExpectedRecord {
  /** stable key of the record among a domain's records, used to keep check results */
  key: string;
  purpose: RecordPurpose;
  required: boolean;
  type: 'CNAME' | 'MX' | 'TXT';
  name: string;
  value: string;
  priority?: number;
  /** dkim: a TXT record holding this key at the name is as good as the CNAME */
  publicKey?: string;
}

export interface RecordCheck {
  /** 'error' when DNS did not answer: the previous verdict stands */
  dns: Exclude<DnsState, 'unchecked'> | 'error';
  /** what public DNS holds at the name, for the customer and for insights (DMARC policy) */
  seen: string[];
}

const sameName = (a: string, b: string) => normalizeName(a) === normalizeName(b);

/** Look a record up and judge it; never throws. */
export async function checkRecord(rec: ExpectedRecord, resolver: DnsResolver, timeoutMs: number): Promise<RecordCheck> {
  try {
    return await withTimeout(judge(rec, resolver), timeoutMs);
  } catch (e) {
    return { dns: 'error', seen: [`lookup failed: ${(e as Error).message}`] };
  }
}

/** All records of a domain at once (interface §4.2 verify reads public DNS "immediately"). */
export async function checkRecords(
  records: ExpectedRecord[],
  resolver: DnsResolver,
  timeoutMs = 5000,
): Promise<Map<string, RecordCheck>> {
  const results = await Promise.all(
    records.map(async (r) => [r.key, await checkRecord(r, resolver, timeoutMs)] as const),
  );
  return new Map(results);
}

async function judge(rec: ExpectedRecord, resolver: DnsResolver): Promise<RecordCheck> {
  switch (rec.type) {
    case 'CNAME':
      return judgeDkim(rec, resolver);
    case 'MX': {
      const mx = await orEmpty(resolver.resolveMx(rec.name));
      const seen = mx.map((m) => `${m.priority} ${normalizeName(m.exchange)}`);
      if (!mx.length) return { dns: 'missing', seen };
      return { dns: mx.some((m) => sameName(m.exchange, rec.value)) ? 'found' : 'mismatch', seen };
    }
    case 'TXT':
      return rec.purpose === 'dmarc' ? judgeDmarc(rec, resolver) : judgeSpf(rec, resolver);
  }
}

async function judgeDkim(rec: ExpectedRecord, resolver: DnsResolver): Promise<RecordCheck> {
  const cnames = await orEmpty(resolver.resolveCname(rec.name));
  if (cnames.length)
    return { dns: cnames.some((c) => sameName(c, rec.value)) ? 'found' : 'mismatch', seen: cnames.map(normalizeName) };
  // Some DNS hosts cannot publish a CNAME at this name; the key itself as a TXT works just as well.
  const txt = (await orEmpty(resolver.resolveTxt(rec.name))).map((parts) => parts.join(''));
  const dkim = txt.filter((t) => /v=DKIM1/i.test(t) || /(^|;)\s*p=/.test(t));
  if (!dkim.length) return { dns: 'missing', seen: txt };
  return {
    dns: rec.publicKey && dkim.some((t) => dkimPublicKeyOf(t) === rec.publicKey) ? 'found' : 'mismatch',
    seen: dkim,
  };
}

/** The p= of a DKIM key record (RFC 6376 §3.6.1), whitespace removed. */
export function dkimPublicKeyOf(record: string): string | undefined {
  return /(?:^|;)\s*p=([A-Za-z0-9+/=\s]*)/.exec(record)?.[1]?.replace(/\s+/g, '');
}

async function judgeSpf(rec: ExpectedRecord, resolver: DnsResolver): Promise<RecordCheck> {
  const spf = (await orEmpty(resolver.resolveTxt(rec.name)))
    .map((p) => p.join(''))
    .filter((t) => /^v=spf1(\s|$)/i.test(t));
  if (!spf.length) return { dns: 'missing', seen: [] };
  // The appliance is authorised when the record names its host (a:host, include:host, mx on the return path) or is ours verbatim.
  const host = rec.value
    .replace(/^v=spf1 a:/, '')
    .replace(/ ~all$/, '')
    .toLowerCase();
  const authorises = (t: string) => {
    const terms = t.toLowerCase().split(/\s+/);
    return (
      terms.includes(`a:${host}`) ||
      terms.includes(`+a:${host}`) ||
      terms.includes(`include:${host}`) ||
      terms.includes('mx') ||
      terms.includes('+mx')
    );
  };
  return { dns: spf.some(authorises) ? 'found' : 'mismatch', seen: spf };
}

async function judgeDmarc(rec: ExpectedRecord, resolver: DnsResolver): Promise<RecordCheck> {
  const dmarc = (await orEmpty(resolver.resolveTxt(rec.name)))
    .map((p) => p.join(''))
    .filter((t) => /^v=DMARC1\s*(;|$)/i.test(t));
  // Any valid DMARC record counts: the customer's own policy is better than our starting point.
  return { dns: dmarc.length ? 'found' : 'missing', seen: dmarc };
}

/** The DMARC policy a record sets (RFC 7489 §6.3 p=). */
export function dmarcPolicy(record: string | undefined): 'none' | 'quarantine' | 'reject' | null {
  const p = record && /(?:^|;)\s*p\s*=\s*(none|quarantine|reject)\b/i.exec(record)?.[1]?.toLowerCase();
  return (p as 'none' | 'quarantine' | 'reject' | undefined) ?? null;
}

async function orEmpty<T>(p: Promise<T[]>): Promise<T[]> {
  try {
    return await p;
  } catch (e) {
    if (isNoRecord(e)) return [];
    throw e;
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]);
}
