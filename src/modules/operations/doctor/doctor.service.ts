import { isIP } from 'node:net';
import { createNameServerLookup } from '../../../dns/name-servers.js';
import { createResolver } from '../../../dns/resolver.js';
import { validationError } from '../../../lib/errors.js';
import type { Store } from '../../../store/store.js';
import {
  lookupFcrdns,
  lookupSourceIps,
  lookupZone,
  probeSmtp,
  readDatabase,
  readDisk,
  readEventLoopLag,
  readTlsFacts,
  withTimeout,
  type SmtpListenerFacts,
} from './probes.js';
import {
  judgeFcrdns,
  judgeProbe,
  judgeSourceIps,
  judgeZone,
  report,
  type Check,
  type CheckName,
  type DoctorReport,
} from './verdicts.js';
import { judgeDatabase, judgeDisk, judgeEventLoop, judgeTls } from './machine-verdicts.js';

/** What the doctor looks at: slices of the configuration, the store, and the --probe target. */
export interface DoctorInput {
  hostname: string;
  outboundMode: 'direct' | 'relay';
  /** outbound.ips: each checked for forward-confirmed reverse DNS against its EHLO name */
  sourceIps: ReadonlyArray<{ address: string; ehlo: string }>;
  resolvers: readonly string[];
  zone: string;
  dnsServerEnabled: boolean;
  tls: { key: string | null; cert: string | null };
  /** where the SMTP listeners bind: without smtp.tls, those facing the network present data_dir/tls's self-signed certificate */
  smtpListeners: SmtpListenerFacts[];
  dataDir: string;
  store: Store;
  /** where a running serve answers /metrics (http or metrics.host/port): its event-loop lag */
  metricsUrl: string;
  /** --probe, read by parseProbeTarget, or null */
  probe: { host: string; port: number } | null;
  now: number;
}

export interface DoctorTimeouts {
  /** per DNS query try (two tries) */
  dnsMs: number;
  /** connecting to the probe target and reading its greeting: receivers may hold it back several seconds (postscreen) */
  probeMs: number;
  databaseMs: number;
  /** the most any one check may take */
  checkMs: number;
}

export const DOCTOR_TIMEOUTS: DoctorTimeouts = { dnsMs: 2000, probeMs: 10_000, databaseMs: 5000, checkMs: 12_000 };

/** HOST, HOST:PORT, [IPv6]:PORT or a bare IPv6 address; port 25 unless given. */
/** Where a serve process of this config answers /metrics, seen from this machine (a wildcard bind is reached on loopback). */
export function metricsUrlOf(
  http: { host: string; port: number },
  metrics: { host: string; port: number | null },
): string {
  const [host, port] = metrics.port !== null ? [metrics.host, metrics.port] : [http.host, http.port];
  const local = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${local.includes(':') ? `[${local}]` : local}:${port}/metrics`;
}

export function parseProbeTarget(s: string): { host: string; port: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(s);
  const [host, port] = bracketed
    ? [bracketed[1], bracketed[2]]
    : isIP(s) === 6
      ? [s, undefined]
      : (s.split(/:(?=[^:]*$)/) as [string, string?]);
  const n = port === undefined ? 25 : Number(port);
  if (!host || !/^\d+$/.test(port ?? '25') || n < 1 || n > 65535)
    throw validationError('--probe', `expected HOST or HOST:PORT, got '${s}'`);
  return { host, port: n };
}

/**
 * Runs every check at once (the network ones wait on timeouts, not on each
 * other) and reports each as it finishes; the report keeps a fixed order.
 */
export async function runDoctor(
  input: DoctorInput,
  onCheck: (c: Check) => void = () => undefined,
  t: DoctorTimeouts = DOCTOR_TIMEOUTS,
): Promise<DoctorReport> {
  const resolver = createResolver({ servers: input.resolvers, timeoutMs: t.dnsMs, tries: 2 });
  const nameServers = createNameServerLookup({ servers: input.resolvers, timeoutMs: t.dnsMs, tries: 2 });
  const checks = doctorChecks(input, resolver, nameServers, t);
  const results = await Promise.all(
    checks.map(async ([name, run]) => {
      const c = await withTimeout(run(), t.checkMs, name).catch((e: unknown): Check => ({
        name,
        status: 'fail',
        message: (e as Error).message,
        hint: null,
      }));
      onCheck(c);
      return c;
    }),
  );
  return report(results);
}

/** Each check of the report, in the report's order: its name, and how it looks and judges. */
function doctorChecks(
  input: DoctorInput,
  resolver: ReturnType<typeof createResolver>,
  nameServers: ReturnType<typeof createNameServerLookup>,
  t: DoctorTimeouts,
): Array<[CheckName, () => Promise<Check>]> {
  const target = input.probe;
  const label =
    target && (target.host.includes(':') ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`);
  return [
    [
      'port_25',
      async () =>
        judgeProbe(
          label,
          target && (await probeSmtp(target.host, target.port, resolver, t.probeMs)),
          input.outboundMode === 'relay',
        ),
    ],
    ['fcrdns', async () => judgeFcrdns(await lookupFcrdns(input.hostname, resolver))],
    ...(input.sourceIps.length
      ? [
          ['source_ips', async () => judgeSourceIps(await lookupSourceIps(input.sourceIps, resolver))] as [
            CheckName,
            () => Promise<Check>,
          ],
        ]
      : []),
    [
      'tls',
      async () =>
        judgeTls(
          await readTlsFacts(input.tls, input.hostname, { dataDir: input.dataDir, listeners: input.smtpListeners }),
          input.hostname,
          input.now,
        ),
    ],
    [
      'dns_zone',
      async () =>
        judgeZone(
          await lookupZone(
            { zone: input.zone, hostname: input.hostname, serverEnabled: input.dnsServerEnabled },
            resolver,
            nameServers,
          ),
        ),
    ],
    ['database', async () => judgeDatabase(await readDatabase(input.store, t.databaseMs))],
    ['disk', async () => judgeDisk(await readDisk(input.dataDir))],
    ['event_loop', async () => judgeEventLoop(await readEventLoopLag(input.metricsUrl, t.databaseMs))],
  ];
}
