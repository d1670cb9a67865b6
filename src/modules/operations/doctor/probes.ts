import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { access, readFile, stat, statfs } from 'node:fs/promises';
import { isIP, connect } from 'node:net';
import { dirname, join } from 'node:path';
import { isNoRecord, type DnsResolver } from '../../../dns/resolver.js';
import { isLoopbackAddress, selfSignedFiles } from '../../../lib/self-signed.js';
import type { Store } from '../../../store/store.js';
import { STORAGE_FULL_MARKER } from '../../../store/storage-state.js';
import type { FcrdnsFacts, NameLookup, ProbeOutcome, SourceIpFacts, ZoneFacts } from './verdicts.js';
import type { DatabaseFacts, DiskFacts, EventLoopFacts, TlsFacts } from './machine-verdicts.js';

// What `posthorn doctor` looks at, as facts for verdicts.ts. Every function
// here answers within its timeout and never throws: a failure is a fact.

export class TimedOut extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not answer within ${ms / 1000} s`);
    this.name = 'TimedOut';
  }
}

export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new TimedOut(what, ms)), ms))),
  ]).finally(() => clearTimeout(timer));
}

const detail = (e: unknown) => (e as { code?: string }).code ?? (e as Error).message;

/** A DNS answer as a fact: records, none (NXDOMAIN, NODATA), or no answer. */
async function lookup(run: () => Promise<string[]>): Promise<NameLookup> {
  try {
    const values = await run();
    return values.length ? { kind: 'found', values } : { kind: 'none' };
  } catch (e) {
    return isNoRecord(e) ? { kind: 'none' } : { kind: 'error', detail: detail(e) };
  }
}

/** A and AAAA together: a name with either has an address. */
async function addressesOf(name: string, resolver: DnsResolver): Promise<NameLookup> {
  const [v4, v6] = await Promise.all([lookup(() => resolver.resolve4(name)), lookup(() => resolver.resolve6(name))]);
  const values = [...(v4.kind === 'found' ? v4.values : []), ...(v6.kind === 'found' ? v6.values : [])];
  if (values.length) return { kind: 'found', values };
  return v4.kind === 'error' ? v4 : v6.kind === 'error' ? v6 : { kind: 'none' };
}

export async function lookupFcrdns(hostname: string, resolver: DnsResolver): Promise<FcrdnsFacts> {
  const addresses = await addressesOf(hostname, resolver);
  const found = addresses.kind === 'found' ? addresses.values : [];
  const ptrs = await Promise.all(
    found.map(async (address) => ({ address, names: await lookup(() => resolver.reverse(address)) })),
  );
  return { hostname, addresses, ptrs };
}

export async function lookupSourceIps(
  ips: ReadonlyArray<{ address: string; ehlo: string }>,
  resolver: DnsResolver,
): Promise<SourceIpFacts[]> {
  return Promise.all(
    ips.map(async (ip) => ({
      address: ip.address,
      ehlo: ip.ehlo,
      ptr: await lookup(() => resolver.reverse(ip.address)),
      ehloAddresses: await addressesOf(ip.ehlo, resolver),
    })),
  );
}

export async function lookupZone(
  o: { zone: string; hostname: string; serverEnabled: boolean },
  resolver: DnsResolver,
  nameServers: (zone: string) => Promise<string[]>,
): Promise<ZoneFacts> {
  const ns = await lookup(() => nameServers(o.zone));
  const listed = ns.kind === 'found' ? ns.values : [];
  const found = (l: NameLookup) => (l.kind === 'found' ? l.values : []);
  const [host, ...each] = await Promise.all([
    addressesOf(o.hostname, resolver),
    ...listed.map((n) => addressesOf(n, resolver)),
  ]);
  return {
    ...o,
    nameServers: ns,
    hostAddresses: found(host),
    nameServerAddresses: listed.map((name, i) => ({ name, addresses: found(each[i]) })),
  };
}

/** Connect to host:port and read the SMTP greeting (RFC 5321 §4.3.1), then QUIT. */
export async function probeSmtp(
  host: string,
  port: number,
  resolver: DnsResolver,
  timeoutMs: number,
): Promise<ProbeOutcome> {
  let address = host;
  if (!isIP(host)) {
    const found = await addressesOf(host, resolver);
    if (found.kind !== 'found')
      return {
        kind: 'no_address',
        detail: found.kind === 'error' ? `DNS did not answer for ${host} (${found.detail})` : `${host} has no address`,
      };
    address = found.values[0]!;
  }
  return new Promise((resolve) => {
    const socket = connect({ host: address, port });
    let text = '';
    let settled = false;
    const done = (outcome: ProbeOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.removeAllListeners('data');
      if (outcome.kind === 'greeting') socket.end('QUIT\r\n');
      else socket.destroy();
      socket.on('error', () => undefined);
      resolve(outcome);
    };
    const timer = setTimeout(
      () => done({ kind: 'timeout', detail: `no greeting within ${timeoutMs / 1000} s` }),
      timeoutMs,
    );
    socket.on('data', (d) => {
      text += d.toString('latin1');
      // a multi-line greeting ends with the line whose code is followed by a space
      const last = text.split(/\r?\n/).find((l) => /^\d{3}(?: |$)/.test(l));
      if (last !== undefined) done({ kind: 'greeting', code: Number(last.slice(0, 3)), text: last.slice(4).trim() });
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      const kind =
        e.code === 'ECONNREFUSED'
          ? 'refused'
          : e.code === 'ETIMEDOUT'
            ? 'timeout'
            : e.code === 'EHOSTUNREACH' || e.code === 'ENETUNREACH'
              ? 'unreachable'
              : 'error';
      done({ kind, detail: e.code ?? e.message });
    });
    socket.on('close', () => done({ kind: 'closed', detail: 'the connection closed before a greeting' }));
  });
}

/** The SMTP listeners as the doctor sees them: which face the network, or take implicit TLS, and so need a certificate. */
export interface SmtpListenerFacts {
  name: string;
  enabled: boolean;
  host: string;
  secure: boolean;
}

export async function readTlsFacts(
  tls: { key: string | null; cert: string | null },
  hostname: string,
  own: { dataDir: string; listeners: SmtpListenerFacts[] },
): Promise<TlsFacts> {
  if (!tls.key || !tls.cert) {
    const facing = own.listeners
      .filter((l) => l.enabled && (l.secure || !isLoopbackAddress(l.host)))
      .map((l) => l.name);
    if (!facing.length) return { kind: 'not_configured' };
    const certPath = selfSignedFiles(own.dataDir).cert;
    const made = await access(certPath).then(
      () => true,
      () => false,
    );
    return { kind: 'self_signed', listeners: facing, certPath, made };
  }
  let cert: X509Certificate;
  let key: KeyObject;
  try {
    cert = new X509Certificate(await readFile(tls.cert));
  } catch (e) {
    return { kind: 'unreadable', file: 'cert', path: tls.cert, detail: (e as Error).message };
  }
  try {
    key = createPrivateKey(await readFile(tls.key));
  } catch (e) {
    return { kind: 'unreadable', file: 'key', path: tls.key, detail: (e as Error).message };
  }
  return {
    kind: 'loaded',
    certPath: tls.cert,
    keyPath: tls.key,
    // a key of another type than the certificate's throws rather than answering false
    keyMatches: (() => {
      try {
        return cert.checkPrivateKey(key);
      } catch {
        return false;
      }
    })(),
    notBefore: Date.parse(cert.validFrom),
    notAfter: Date.parse(cert.validTo),
    namesHost: cert.checkHost(hostname) !== undefined,
    subject: cert.subject.replace(/\n/g, ', '),
  };
}

/**
 * Free space of the file system under data_dir (or its nearest existing
 * parent, before the first start), and since when `posthorn serve`'s writes
 * have failed for lack of space, if they do (its marker file there).
 */
export async function readDisk(dataDir: string): Promise<DiskFacts | { path: string; error: string }> {
  const fullSince = await stat(join(dataDir, STORAGE_FULL_MARKER)).then(
    (s) => s.mtimeMs,
    () => null,
  );
  for (let path = dataDir; ; path = dirname(path)) {
    try {
      const s = await statfs(path);
      return { path, freeBytes: s.bavail * s.bsize, totalBytes: s.blocks * s.bsize, fullSince };
    } catch (e) {
      if ((e as { code?: string }).code !== 'ENOENT' || dirname(path) === path) return { path, error: detail(e) };
    }
  }
}

export async function readDatabase(store: Store, timeoutMs: number): Promise<DatabaseFacts> {
  try {
    const pending = await withTimeout(
      (async () => {
        await store.ping();
        return store.pendingMigrations();
      })(),
      timeoutMs,
      'the database',
    );
    return { kind: 'answered', client: store.client, pending };
  } catch (e) {
    return { kind: 'error', client: store.client, detail: (e as Error).message };
  }
}

const LAG = /^posthorn_event_loop_lag_p99_seconds\{([^}]*)\} (\S+)$/gm;

/** The event-loop lag of each thread, from the /metrics of a serve process at `url` (loopback or the operator's metrics address). */
export async function readEventLoopLag(url: string, timeoutMs: number): Promise<EventLoopFacts> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    if (res.status !== 200) return { url, error: `status ${res.status}` };
    const text = await res.text();
    const lags = [...text.matchAll(LAG)].map((m) => ({
      thread: /thread="([^"]*)"/.exec(m[1])?.[1] ?? 'main',
      seconds: Number(m[2]),
    }));
    return { url, lags: lags.filter((l) => Number.isFinite(l.seconds)) };
  } catch (e) {
    return { url, error: detail(e) };
  }
}
