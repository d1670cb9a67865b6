// `posthorn doctor`'s verdicts: what was seen → ok, warn or fail, with what
// to do about it. No I/O here: probes.ts looks, these judge, so every verdict
// is a table test away.

export type CheckStatus = 'ok' | 'warn' | 'fail';
export type CheckName = 'port_25' | 'fcrdns' | 'tls' | 'dns_zone' | 'database' | 'disk' | 'event_loop';

export interface Check {
  name: CheckName;
  status: CheckStatus;
  message: string;
  /** what to do; null when there is nothing to do */
  hint: string | null;
}

export interface DoctorReport {
  /** false when any check failed; warnings leave it true */
  ok: boolean;
  checks: Check[];
}

const check = (name: CheckName, status: CheckStatus, message: string, hint: string | null = null): Check => ({ name, status, message, hint });

export function report(checks: Check[]): DoctorReport {
  return { ok: checks.every((c) => c.status !== 'fail'), checks };
}

/** How a connection to port 25 went: a greeting (its reply code and text) or why there was none. */
export type ProbeOutcome =
  | { kind: 'greeting'; code: number; text: string }
  | { kind: 'refused' | 'timeout' | 'unreachable' | 'no_address' | 'closed' | 'error'; detail: string };

export function judgeProbe(target: string | null, outcome: ProbeOutcome | null, relayMode: boolean): Check {
  if (!target || !outcome) {
    return check(
      'port_25',
      'warn',
      relayMode ? 'not run; outbound.mode is relay, so direct delivery does not need port 25' : 'not run: no --probe HOST given',
      'run posthorn doctor --probe HOST with the MX host of a domain you send to (e.g. the one `dig MX gmail.com` names): it connects to port 25 and reads the greeting',
    );
  }
  if (outcome.kind === 'greeting') {
    if (outcome.code === 220) return check('port_25', 'ok', `${target} answered: ${outcome.code} ${outcome.text}`.trim());
    return check('port_25', 'warn', `${target} is reachable but greeted with ${outcome.code} ${outcome.text}`.trim(), "the server refuses this machine's address: look it up on blocklists (e.g. Spamhaus) and check its PTR record");
  }
  const blocked = 'outbound TCP port 25 looks blocked: many hosting providers block it until asked; ask yours to open it, or send through a relay (outbound.mode: relay)';
  const hints: Record<Exclude<ProbeOutcome['kind'], 'greeting'>, string> = {
    refused: `nothing listens at ${target}, or a firewall rejects the connection; ${blocked}`,
    timeout: blocked,
    unreachable: `no route to ${target}: check this machine's network and firewall`,
    no_address: `the name has no A or AAAA record through dns.resolvers: check the name and dns.resolvers`,
    closed: `the server closed the connection without a greeting; try another host, or ${blocked}`,
    error: blocked,
  };
  return check('port_25', 'fail', `no SMTP greeting from ${target}: ${outcome.detail}`, hints[outcome.kind]);
}

/** outbound.hostname → its addresses → each address's PTR names. `error`: DNS did not answer. */
export type NameLookup = { kind: 'found'; values: string[] } | { kind: 'none' } | { kind: 'error'; detail: string };

export interface FcrdnsFacts {
  hostname: string;
  addresses: NameLookup;
  /** PTR lookups of each address found */
  ptrs: Array<{ address: string; names: NameLookup }>;
}

const sameName = (a: string, b: string) => a.replace(/\.$/, '').toLowerCase() === b.replace(/\.$/, '').toLowerCase();

export function judgeFcrdns(f: FcrdnsFacts): Check {
  const host = f.hostname;
  if (!host.includes('.') || /(^|\.)localhost$/i.test(host)) {
    return check('fcrdns', 'fail', `outbound.hostname is ${host}, which receiving servers cannot look up`, 'set outbound.hostname to the public name of this machine (the name its PTR record gives)');
  }
  if (f.addresses.kind === 'error') return check('fcrdns', 'fail', `DNS did not answer for ${host}: ${f.addresses.detail}`, 'check dns.resolvers');
  if (f.addresses.kind === 'none') return check('fcrdns', 'fail', `${host} has no A or AAAA record`, `publish an A (and AAAA, if this machine sends over IPv6) record for ${host} with this machine's address`);
  const bad = f.ptrs.filter((p) => p.names.kind !== 'found' || !p.names.values.some((n) => sameName(n, host)));
  if (!bad.length) return check('fcrdns', 'ok', `${host} → ${f.addresses.values.join(', ')} → ${host}`);
  const seen = bad.map(({ address, names }) => `${address} has ${names.kind === 'found' ? `PTR ${names.values.join(', ')}` : names.kind === 'none' ? 'no PTR record' : `no PTR answer (${names.detail})`}`).join('; ');
  const fix = `ask whoever owns the address (usually the hosting provider) to set its reverse DNS to ${host}`;
  if (bad.length < f.ptrs.length) return check('fcrdns', 'warn', `${seen}; the other addresses point back to ${host}`, fix);
  return check('fcrdns', 'fail', `${seen}, not ${host}: receivers reject or junk mail whose sender's reverse DNS does not match`, fix);
}

export type TlsFacts =
  | { kind: 'not_configured' }
  /** smtp.tls unset, and listeners that face the network (or take implicit TLS) present data_dir/tls's certificate; `made`: it exists yet */
  | { kind: 'self_signed'; listeners: string[]; certPath: string; made: boolean }
  | { kind: 'unreadable'; file: 'cert' | 'key'; path: string; detail: string }
  | { kind: 'loaded'; certPath: string; keyPath: string; keyMatches: boolean; notBefore: number; notAfter: number; namesHost: boolean; subject: string };

const DAY = 86_400_000;

export function judgeTls(f: TlsFacts, hostname: string, now: number): Check {
  if (f.kind === 'not_configured') {
    return check('tls', 'warn', 'smtp.tls is not set: the SMTP listeners take loopback clients only and offer no STARTTLS', `to take mail from the network, bind them to 0.0.0.0 and set smtp.tls.cert and smtp.tls.key to a certificate for ${hostname} (e.g. from Let's Encrypt)`);
  }
  if (f.kind === 'self_signed') {
    const which = `the ${f.listeners.join(' and ')} listener${f.listeners.length > 1 ? 's' : ''}`;
    return check(
      'tls',
      'warn',
      `smtp.tls is not set: ${which} present${f.listeners.length > 1 ? '' : 's'} a self-signed certificate for ${hostname} (${f.certPath}${f.made ? '' : ', made at the next start'}); clients that verify certificates refuse it until they are told to trust it`,
      `set smtp.tls.cert and smtp.tls.key to a certificate for ${hostname} (e.g. from Let's Encrypt); docs/security.md`,
    );
  }
  if (f.kind === 'unreadable') return check('tls', 'fail', `smtp.tls.${f.file} ${f.path} cannot be used: ${f.detail}`, `point smtp.tls.${f.file} at a readable PEM file`);
  if (!f.keyMatches) return check('tls', 'fail', `the key ${f.keyPath} does not belong to the certificate ${f.certPath}`, 'configure the key the certificate was issued for (the pair your CA or certbot wrote together)');
  const problems: string[] = [];
  if (now > f.notAfter) problems.push(`it expired on ${new Date(f.notAfter).toISOString()}`);
  else if (now < f.notBefore) problems.push(`it is valid only from ${new Date(f.notBefore).toISOString()}`);
  else if (f.notAfter - now < 14 * DAY) problems.push(`it expires on ${new Date(f.notAfter).toISOString()}`);
  if (!f.namesHost) problems.push(`it does not name ${hostname} (subject ${f.subject})`);
  if (problems.length) return check('tls', 'warn', `the certificate loads and matches its key, but ${problems.join(', and ')}`, `renew it for ${hostname}; clients that verify certificates refuse it until then`);
  return check('tls', 'ok', `certificate for ${hostname} matches its key, valid until ${new Date(f.notAfter).toISOString()}`);
}

export interface ZoneFacts {
  zone: string;
  hostname: string;
  serverEnabled: boolean;
  /** the NS records of the zone, through dns.resolvers */
  nameServers: NameLookup;
  /** addresses of outbound.hostname, and of each name server named */
  hostAddresses: string[];
  nameServerAddresses: Array<{ name: string; addresses: string[] }>;
}

export function judgeZone(f: ZoneFacts): Check {
  const delegate = `delegate it at its parent: ${f.zone}. NS ${f.hostname}. (with an A record for ${f.hostname}), so the DKIM CNAMEs of sending domains resolve`;
  if (!f.serverEnabled) return check('dns_zone', 'warn', `dns.server.enabled is false: nothing here answers for ${f.zone}`, `set dns.server.enabled: true (port 53 reachable from the internet) and ${delegate}`);
  if (f.nameServers.kind === 'error') return check('dns_zone', 'fail', `no answer for the NS records of ${f.zone}: ${f.nameServers.detail}`, `check that the built-in DNS server answers on port 53 from outside, and ${delegate}`);
  if (f.nameServers.kind === 'none') return check('dns_zone', 'fail', `${f.zone} is not delegated: DNS has no NS record for it`, delegate);
  const names = f.nameServers.values;
  const ours = (n: { name: string; addresses: string[] }) => sameName(n.name, f.hostname) || n.addresses.some((a) => f.hostAddresses.includes(a));
  if (names.some((n) => sameName(n, f.hostname)) || f.nameServerAddresses.some(ours)) return check('dns_zone', 'ok', `${f.zone} is delegated to ${names.join(', ')}`);
  return check('dns_zone', 'warn', `${f.zone} is delegated to ${names.join(', ')}, which is not ${f.hostname} nor at its address`, `if those servers are not this appliance, ${delegate}`);
}

export type DatabaseFacts = { kind: 'answered'; client: string; pending: string[] } | { kind: 'error'; client: string; detail: string };

export function judgeDatabase(f: DatabaseFacts): Check {
  if (f.kind === 'error') return check('database', 'fail', `the ${f.client} database did not answer: ${f.detail}`, f.client === 'pg' ? 'check database.url and that PostgreSQL runs and accepts this user' : 'check data_dir and its permissions');
  const n = f.pending.length;
  const names = n > 3 ? `${f.pending[0]} … ${f.pending[n - 1]}` : f.pending.join(', ');
  if (n) return check('database', 'fail', `${n} migration${n === 1 ? '' : 's'} not applied: ${names}`, 'run posthorn migrate (posthorn serve also applies them when it starts)');
  return check('database', 'ok', `the ${f.client} database answers and every migration is applied`);
}

export interface DiskFacts {
  path: string;
  freeBytes: number;
  totalBytes: number;
  /** since when a running `posthorn serve` has failed to write for lack of space (epoch ms); null or absent: it has not */
  fullSince?: number | null;
}

/** Below these the WAL, a VACUUM INTO backup or a burst of queued mail may not fit. */
export const DISK_FAIL_BYTES = 256 * 1024 ** 2;
export const DISK_WARN_BYTES = 2 * 1024 ** 3;
export const DISK_WARN_SHARE = 0.05;

/** GiB, or MiB below one: a small disk's "0.0 GiB free" says nothing */
const gib = (n: number) => (n < 1024 ** 3 ? `${(n / 1024 ** 2).toFixed(1)} MiB` : `${(n / 1024 ** 3).toFixed(1)} GiB`);

export function judgeDisk(f: DiskFacts | { path: string; error: string }): Check {
  if ('error' in f) return check('disk', 'fail', `cannot read the free space under ${f.path}: ${f.error}`, 'check that data_dir exists and is readable');
  const share = f.totalBytes ? f.freeBytes / f.totalBytes : 0;
  const seen = `${gib(f.freeBytes)} free of ${gib(f.totalBytes)} (${Math.floor(share * 100)}%) under ${f.path}`;
  const fix = 'free space or move data_dir to a larger disk: SQLite stops writing when the disk is full, and the API then refuses mail (503 storage_full)';
  if (f.fullSince != null) {
    const failing = `posthorn serve's writes have failed for lack of space since ${new Date(f.fullSince).toISOString()}; ${seen}`;
    return check('disk', 'fail', failing, 'free space under data_dir (with PostgreSQL: on the database server): writes resume by themselves within seconds, without a restart');
  }
  if (f.freeBytes < DISK_FAIL_BYTES) return check('disk', 'fail', seen, fix);
  if (f.freeBytes < DISK_WARN_BYTES || share < DISK_WARN_SHARE) return check('disk', 'warn', seen, fix);
  return check('disk', 'ok', seen);
}

/** What a running `posthorn serve` says of its threads' event-loop lag (its /metrics), or why it could not be asked. */
export type EventLoopFacts = { url: string; lags: Array<{ thread: string; seconds: number }> } | { url: string; error: string };

/** A thread that answers HTTP, SMTP or DNS lagging this much keeps every client of the appliance waiting (docs/security.md). */
export const EVENT_LOOP_WARN_SECONDS = 0.1;

export function judgeEventLoop(f: EventLoopFacts): Check {
  if ('error' in f) return check('event_loop', 'ok', `not measured: no posthorn serve answered at ${f.url} (${f.error})`);
  if (!f.lags.length) return check('event_loop', 'warn', `${f.url} answered without posthorn_event_loop_lag_p99_seconds`, 'point doctor at the appliance: http.host and http.port, or metrics.host and metrics.port');
  const seen = f.lags.map((l) => `${l.thread} ${Math.round(l.seconds * 1000)} ms`).join(', ');
  const slow = f.lags.filter((l) => l.seconds > EVENT_LOOP_WARN_SECONDS);
  if (!slow.length) return check('event_loop', 'ok', `event-loop lag p99 since the last scrape: ${seen}`);
  return check(
    'event_loop',
    'warn',
    `event-loop lag p99 since the last scrape over ${EVENT_LOOP_WARN_SECONDS * 1000} ms: ${seen}`,
    'something holds a thread that answers clients: look at posthorn_parse_jobs_total and posthorn_smtp_sessions_dropped_total in /metrics and at the log; docs/security.md',
  );
}
