// `posthorn doctor`'s verdicts on this machine itself: its TLS certificate,
// its database, its disk and its event loops. Pure, like verdicts.ts.

import { check, type Check } from './verdicts.js';

export type TlsFacts =
  | { kind: 'not_configured' }
  /** smtp.tls unset, and listeners that face the network (or take implicit TLS) present data_dir/tls's certificate; `made`: it exists yet */
  | { kind: 'self_signed'; listeners: string[]; certPath: string; made: boolean }
  | { kind: 'unreadable'; file: 'cert' | 'key'; path: string; detail: string }
  | {
      kind: 'loaded';
      certPath: string;
      keyPath: string;
      keyMatches: boolean;
      notBefore: number;
      notAfter: number;
      namesHost: boolean;
      subject: string;
    };

const DAY = 86_400_000;

export function judgeTls(f: TlsFacts, hostname: string, now: number): Check {
  if (f.kind === 'not_configured') {
    return check(
      'tls',
      'warn',
      'smtp.tls is not set: the SMTP listeners take loopback clients only and offer no STARTTLS',
      `to take mail from the network, bind them to 0.0.0.0 and set smtp.tls.cert and smtp.tls.key to a certificate for ${hostname} (e.g. from Let's Encrypt)`,
    );
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
  if (f.kind === 'unreadable')
    return check(
      'tls',
      'fail',
      `smtp.tls.${f.file} ${f.path} cannot be used: ${f.detail}`,
      `point smtp.tls.${f.file} at a readable PEM file`,
    );
  if (!f.keyMatches)
    return check(
      'tls',
      'fail',
      `the key ${f.keyPath} does not belong to the certificate ${f.certPath}`,
      'configure the key the certificate was issued for (the pair your CA or certbot wrote together)',
    );
  const problems: string[] = [];
  if (now > f.notAfter) problems.push(`it expired on ${new Date(f.notAfter).toISOString()}`);
  else if (now < f.notBefore) problems.push(`it is valid only from ${new Date(f.notBefore).toISOString()}`);
  else if (f.notAfter - now < 14 * DAY) problems.push(`it expires on ${new Date(f.notAfter).toISOString()}`);
  if (!f.namesHost) problems.push(`it does not name ${hostname} (subject ${f.subject})`);
  if (problems.length)
    return check(
      'tls',
      'warn',
      `the certificate loads and matches its key, but ${problems.join(', and ')}`,
      `renew it for ${hostname}; clients that verify certificates refuse it until then`,
    );
  return check(
    'tls',
    'ok',
    `certificate for ${hostname} matches its key, valid until ${new Date(f.notAfter).toISOString()}`,
  );
}

export type DatabaseFacts =
  { kind: 'answered'; client: string; pending: string[] } | { kind: 'error'; client: string; detail: string };

export function judgeDatabase(f: DatabaseFacts): Check {
  if (f.kind === 'error')
    return check(
      'database',
      'fail',
      `the ${f.client} database did not answer: ${f.detail}`,
      f.client === 'pg'
        ? 'check database.url and that PostgreSQL runs and accepts this user'
        : 'check data_dir and its permissions',
    );
  const n = f.pending.length;
  const names = n > 3 ? `${f.pending[0]} … ${f.pending[n - 1]}` : f.pending.join(', ');
  if (n)
    return check(
      'database',
      'fail',
      `${n} migration${n === 1 ? '' : 's'} not applied: ${names}`,
      'run posthorn migrate (posthorn serve also applies them when it starts)',
    );
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
  if ('error' in f)
    return check(
      'disk',
      'fail',
      `cannot read the free space under ${f.path}: ${f.error}`,
      'check that data_dir exists and is readable',
    );
  const share = f.totalBytes ? f.freeBytes / f.totalBytes : 0;
  const seen = `${gib(f.freeBytes)} free of ${gib(f.totalBytes)} (${Math.floor(share * 100)}%) under ${f.path}`;
  const fix =
    'free space or move data_dir to a larger disk: SQLite stops writing when the disk is full, and the API then refuses mail (503 storage_full)';
  if (f.fullSince != null) {
    const failing = `posthorn serve's writes have failed for lack of space since ${new Date(f.fullSince).toISOString()}; ${seen}`;
    return check(
      'disk',
      'fail',
      failing,
      'free space under data_dir (with PostgreSQL: on the database server): writes resume by themselves within seconds, without a restart',
    );
  }
  if (f.freeBytes < DISK_FAIL_BYTES) return check('disk', 'fail', seen, fix);
  if (f.freeBytes < DISK_WARN_BYTES || share < DISK_WARN_SHARE) return check('disk', 'warn', seen, fix);
  return check('disk', 'ok', seen);
}

/** What a running `posthorn serve` says of its threads' event-loop lag (its /metrics), or why it could not be asked. */
export type EventLoopFacts =
  { url: string; lags: Array<{ thread: string; seconds: number }> } | { url: string; error: string };

/** A thread that answers HTTP, SMTP or DNS lagging this much keeps every client of the appliance waiting (docs/security.md). */
export const EVENT_LOOP_WARN_SECONDS = 0.1;

export function judgeEventLoop(f: EventLoopFacts): Check {
  if ('error' in f)
    return check('event_loop', 'ok', `not measured: no posthorn serve answered at ${f.url} (${f.error})`);
  if (!f.lags.length)
    return check(
      'event_loop',
      'warn',
      `${f.url} answered without posthorn_event_loop_lag_p99_seconds`,
      'point doctor at the appliance: http.host and http.port, or metrics.host and metrics.port',
    );
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
