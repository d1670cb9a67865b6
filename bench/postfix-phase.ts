// Issue 24's reference figures: Postfix relaying to the bench's sink on this machine, in the same run as
// Posthorn's deliveries, with and without OpenDKIM signing. The bench installs nothing: the phase runs
// when Debian's postfix and opendkim packages are there (and the bench runs as root, as Postfix's
// master must), and otherwise says what is missing.
//
// The instance is private: its main.cf and master.cf, its queue and data directories and its log live
// in a temp folder; its smtpd listens on a free loopback port, and it relays everything to the sink
// (relayhost = [127.0.0.1]:sink port, so no DNS). The load has the shape of Posthorn's delivery phase:
// messages of ~1.2 KB text + html, each to one recipient at one of 10 domains, submitted over 16
// connections that pipeline (RFC 2920); the rate is messages / (first submit → last arrival at the sink).
// The system's own Postfix configuration (/etc/postfix), if any, is neither read nor changed.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { promisify } from 'node:util';
import { dkimVerify } from 'mailauth';
import { SmtpSession } from '../test/helpers/smtp-pipelined.js';

const run = promisify(execFile);

const POSTFIX = '/usr/sbin/postfix';
const POSTCONF = '/usr/sbin/postconf';
const OPENDKIM = '/usr/sbin/opendkim';
const SIGNING_DOMAIN = 'shop.bench.test';
const SELECTOR = 'pf';
/** the body of Posthorn's delivery phase (bench/run.ts): its text, and the same in a <p> as the html part */
const TEXT = 'Hello, this is a transactional message of ordinary size.\n'.repeat(20);

/** What the sink offers: SmtpSink (test/helpers/smtp-sink.ts) is one. */
export interface PostfixPhaseSink {
  port: number;
  readonly messages: ReadonlyArray<{ envelope: { to: string[] }; raw: Buffer }>;
}

export interface PostfixPhaseOptions {
  sink: PostfixPhaseSink;
  /** messages in each measured run (3,000 unless given, as Posthorn's delivery phase) */
  messages?: number;
  /** unmeasured messages before each measured run (500 unless given): the instance starts its processes */
  warmup?: number;
  /** SMTP connections the load submits over (16 unless given, as the HTTP clients of Posthorn's delivery phase) */
  connections?: number;
  /**
   * How Postfix reaches OpenDKIM: a Unix socket in the temp folder (the default, as Debian's packages
   * set them up), or a loopback TCP port. Over TCP, two of the milter replies of every message wait
   * ~40 ms each (Nagle's algorithm holds a small write until the peer's delayed ACK), which caps a connection at ~10 messages/s.
   */
  milterSocket?: 'unix' | 'inet';
  /** progress lines (bench/run.ts's `step`) */
  step?: (what: string) => void;
}

export interface PostfixRun {
  /** messages relayed per second: messages / (first submit → last arrival at the sink) */
  per_s: number;
  seconds: number;
  /** messages accepted per second by Postfix's smtpd (first submit → last 250) */
  submitted_per_s: number;
  /** cores kept busy on the whole machine (Postfix, OpenDKIM, this process with the load and the sink) */
  machine_cores: number;
  /** cores kept busy by this process (the load and the sink) */
  bench_process_cores: number;
  /** cores kept busy by OpenDKIM (the run with signing) */
  opendkim_cores?: number;
}

export type PostfixPhaseResult =
  | { available: false; reason: string }
  | {
      available: true;
      postfix_version: string;
      opendkim_version: string;
      messages: number;
      warmup: number;
      connections: number;
      relay_per_s: number;
      relay_dkim_per_s: number;
      relay: PostfixRun;
      relay_dkim: PostfixRun;
      /** what the signed run's messages carried at the sink */
      dkim_check: string;
      /** the main.cf settings that bear on the figures, as Postfix reads them (postconf) */
      settings: Record<string, string>;
    };

/** Why the phase cannot run here, or null when it can. */
export function postfixUnavailable(): string | null {
  const missing = [
    ...(existsSync(POSTFIX) && existsSync(POSTCONF) ? [] : [`${POSTFIX} (Debian package postfix)`]),
    ...(existsSync(OPENDKIM) ? [] : [`${OPENDKIM} (Debian package opendkim)`]),
  ];
  if (missing.length)
    return `not installed: ${missing.join(', ')}; the bench installs nothing (apt-get install postfix opendkim)`;
  if (process.getuid?.() !== 0) return "Postfix's master must be started as root, and the bench is not running as root";
  return null;
}

export async function postfixPhase(o: PostfixPhaseOptions): Promise<PostfixPhaseResult> {
  const reason = postfixUnavailable();
  if (reason) {
    o.step?.(`postfix: skipped (${reason})`);
    return { available: false, reason };
  }
  const step = o.step ?? (() => undefined);
  const n = o.messages ?? 3000;
  const warmup = o.warmup ?? 500;
  const connections = o.connections ?? 16;
  const dir = mkdtempSync(join(tmpdir(), 'posthorn-postfix-'));
  // Postfix's daemons run as the postfix user and open the folder's files by name
  chmodSync(dir, 0o755);
  let instance: Instance | null = null;
  let opendkim: ChildProcess | null = null;
  try {
    instance = new Instance(dir);
    const postfixVersion = (await run(POSTCONF, ['-d', '-h', 'mail_version'])).stdout.trim();
    const opendkimVersion = /v([\d.]+\S*)/.exec((await run(OPENDKIM, ['-V'])).stdout)?.[1] ?? 'unknown';
    const taken = new Set([o.sink.port]);
    const smtpdPort = await freePort(taken);
    const milter =
      (o.milterSocket ?? 'unix') === 'unix'
        ? {
            opendkim: `local:${join(dir, 'opendkim.sock')}`,
            postfix: `unix:${join(dir, 'opendkim.sock')}`,
            connect: { path: join(dir, 'opendkim.sock') },
          }
        : await freePort(taken).then((port) => ({
            opendkim: `inet:${port}@127.0.0.1`,
            postfix: `inet:127.0.0.1:${port}`,
            connect: { host: '127.0.0.1', port },
          }));
    instance.configure({ version: postfixVersion, smtpdPort, sinkPort: o.sink.port });
    const settings = await instance.settings();

    // one tag per phase: the messages counted are this phase's, whatever else the sink receives
    const tag = `pf${Date.now().toString(36)}`;
    const load = { sink: o.sink, port: smtpdPort, connections, instance };

    step(`postfix ${postfixVersion}: relay to the sink without DKIM (${warmup} unmeasured, then ${n})`);
    await instance.start();
    await relay(load, `${tag}w`, warmup, () => null);
    const relayRun = await relay(load, `${tag}r`, n, (raw) =>
      hasDkimSignature(raw) ? 'a message relayed without a milter carries a DKIM-Signature' : null,
    );
    await instance.stop();
    step(`  ${summary(relayRun)}`);

    step(
      `postfix with OpenDKIM ${opendkimVersion} (milter on ${milter.postfix.split(':')[0]}, RSA-2048, relaxed/relaxed): relay to the sink (${warmup} unmeasured, then ${n})`,
    );
    const { publicKey } = writeOpenDkimConfig(dir, milter.opendkim);
    opendkim = spawn(OPENDKIM, ['-f', '-x', join(dir, 'opendkim.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let opendkimErr = '';
    opendkim.stderr!.on('data', (d) => (opendkimErr += d));
    await listening(milter.connect, opendkim, () => opendkimErr);
    instance.configure({ version: postfixVersion, smtpdPort, sinkPort: o.sink.port, milter: milter.postfix });
    Object.assign(settings, await instance.settings());
    await instance.start();
    const unsigned = (raw: Buffer) =>
      hasDkimSignature(raw) ? null : 'a message arrived at the sink without a DKIM-Signature';
    const warm = await relay(load, `${tag}x`, warmup, unsigned);
    const dkimRun = await relay({ ...load, opendkimPid: opendkim.pid! }, `${tag}k`, n, unsigned);
    await instance.stop();
    step(`  ${summary(dkimRun)}`);
    // a few signatures checked by an independent verifier, with the key OpenDKIM signed with
    const sample = [...warm.sample, ...dkimRun.sample];
    for (const raw of sample) await verifySignature(raw, publicKey);
    const { sample: _a, ...relayFigures } = relayRun;
    const { sample: _b, ...dkimFigures } = dkimRun;
    return {
      available: true,
      postfix_version: postfixVersion,
      opendkim_version: opendkimVersion,
      messages: n,
      warmup,
      connections,
      relay_per_s: relayFigures.per_s,
      relay_dkim_per_s: dkimFigures.per_s,
      relay: relayFigures,
      relay_dkim: dkimFigures,
      dkim_check: `all ${warmup + n} messages of the signed runs carried a DKIM-Signature (d=${SIGNING_DOMAIN}); ${sample.length} of them verified (mailauth: pass)`,
      settings,
    };
  } finally {
    await instance?.stop().catch(() => undefined);
    if (opendkim && opendkim.exitCode === null && opendkim.signalCode === null) {
      opendkim.kill('SIGTERM');
      await Promise.race([once(opendkim, 'exit'), sleep(5000)]);
      if (opendkim.exitCode === null && opendkim.signalCode === null) opendkim.kill('SIGKILL');
    }
    await instance?.processesGone();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The private Postfix instance in `dir`: conf/ (main.cf, master.cf), queue/, data/ and maillog. */
class Instance {
  readonly conf: string;
  readonly queue: string;
  private running = false;

  constructor(readonly dir: string) {
    this.conf = join(dir, 'conf');
    this.queue = join(dir, 'queue');
    mkdirSync(this.conf);
    mkdirSync(this.queue);
    // data/ is left to `postfix start` (post-install), which makes it the postfix user's: one made here is root's and master cannot lock in it
  }

  configure(o: { version: string; smtpdPort: number; sinkPort: number; milter?: string }): void {
    const [major = 0, minor = 0] = o.version.split('.').map(Number);
    const main: Record<string, string> = {
      // compatibility levels are major.minor from Postfix 3.6 on, 0..3 before
      compatibility_level: major > 3 || (major === 3 && minor >= 6) ? `${major}.${minor}` : '2',
      config_directory: this.conf,
      queue_directory: this.queue,
      data_directory: join(this.dir, 'data'),
      mail_owner: 'postfix',
      setgid_group: 'postdrop',
      // its own log file (postlogd), no syslog needed
      maillog_file: join(this.dir, 'maillog'),
      maillog_file_prefixes: this.dir,
      myhostname: 'postfix.bench.test',
      mydomain: 'bench.test',
      myorigin: '$mydomain',
      inet_interfaces: 'loopback-only',
      inet_protocols: 'ipv4',
      mynetworks: '127.0.0.0/8',
      smtpd_relay_restrictions: 'permit_mynetworks, reject',
      // nothing is delivered locally: everything is relayed to the sink
      mydestination: '',
      local_recipient_maps: '',
      local_transport: 'error:local delivery is disabled',
      alias_maps: '',
      alias_database: '',
      biff: 'no',
      relayhost: `[127.0.0.1]:${o.sinkPort}`,
      smtp_tls_security_level: 'none',
      smtpd_tls_security_level: 'none',
      // Postfix's defaults, written out so that the report shows them
      default_destination_concurrency_limit: '20',
      initial_destination_concurrency: '5',
      default_destination_recipient_limit: '50',
      default_process_limit: '100',
      // sessions to the sink are reused once mail waits for it (the sink greets a new one after 100 ms;
      // caching them always, smtp_connection_cache_destinations = $relayhost, changed nothing measurable
      // here: 3 interleaved pairs, both runs CPU-bound)
      smtp_connection_cache_on_demand: 'yes',
      in_flow_delay: '1s',
      ...(o.milter ? { smtpd_milters: o.milter, milter_default_action: 'tempfail', milter_protocol: '6' } : {}),
    };
    writeFileSync(
      join(this.conf, 'main.cf'),
      Object.entries(main)
        .map(([k, v]) => `${k} = ${v}`.trimEnd() + '\n')
        .join(''),
    );
    // master.cf: only the services a relay uses, none chrooted (a chroot would need copies of /etc in the queue)
    // service type private unpriv chroot wakeup maxproc command
    const master = [
      `127.0.0.1:${o.smtpdPort} inet n - n - - smtpd`,
      'cleanup unix n - n - 0 cleanup',
      'qmgr unix n - n 300 1 qmgr',
      'rewrite unix - - n - - trivial-rewrite',
      'bounce unix - - n - 0 bounce',
      'defer unix - - n - 0 bounce',
      'trace unix - - n - 0 bounce',
      'verify unix - - n - 1 verify',
      'flush unix n - n 1000? 0 flush',
      'proxymap unix - - n - - proxymap',
      'smtp unix - - n - - smtp',
      'relay unix - - n - - smtp',
      'showq unix n - n - - showq',
      'error unix - - n - - error',
      'retry unix - - n - - error',
      'discard unix - - n - - discard',
      'anvil unix - - n - 1 anvil',
      'scache unix - - n - 1 scache',
      'postlog unix-dgram n - n - 1 postlogd',
    ];
    writeFileSync(join(this.conf, 'master.cf'), master.join('\n') + '\n');
  }

  /** The settings that bear on the figures, as Postfix itself reads them. */
  async settings(): Promise<Record<string, string>> {
    const names = [
      'mail_version',
      'compatibility_level',
      'relayhost',
      'default_destination_concurrency_limit',
      'initial_destination_concurrency',
      'default_destination_recipient_limit',
      'default_process_limit',
      'smtp_connection_cache_on_demand',
      'in_flow_delay',
      'smtp_tls_security_level',
      'smtpd_milters',
      'milter_default_action',
    ];
    const { stdout } = await run(POSTCONF, ['-c', this.conf, ...names]);
    return Object.fromEntries(
      stdout.split('\n').flatMap((line) => {
        const m = /^(\S+) =\s?(.*)$/.exec(line);
        return m ? [[m[1], m[2].trim()]] : [];
      }),
    );
  }

  async start(): Promise<void> {
    try {
      await run(POSTFIX, ['-c', this.conf, 'start']);
    } catch (e) {
      throw new Error(
        `postfix -c ${this.conf} start failed: ${(e as { stderr?: string }).stderr ?? String(e)}\n${this.log()}`,
        { cause: e },
      );
    }
    this.running = true;
  }

  /** `postfix stop`, then waits for master and its daemons to be gone. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    const master = this.masterPid();
    await run(POSTFIX, ['-c', this.conf, 'stop']).catch(() => undefined);
    const deadline = Date.now() + 10_000;
    while (master && alive(master) && Date.now() < deadline) await sleep(50);
    if (master && alive(master)) process.kill(master, 'SIGKILL');
    await this.processesGone();
  }

  /** Waits until no process works in the instance's folder (Postfix's daemons chdir to the queue); after 10 s, ends those left. */
  async processesGone(): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const left = processesIn(this.dir);
      if (!left.length) return;
      if (Date.now() > deadline) {
        for (const pid of left) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone meanwhile
          }
        }
        return;
      }
      await sleep(50);
    }
  }

  private masterPid(): number | null {
    try {
      return Number(readFileSync(join(this.queue, 'pid', 'master.pid'), 'utf8').trim()) || null;
    } catch {
      return null;
    }
  }

  /** The end of the instance's log, for errors. */
  log(lines = 30): string {
    try {
      return readFileSync(join(this.dir, 'maillog'), 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no maillog)';
    }
  }
}

type RunResult = PostfixRun & { sample: Buffer[] };

const summary = ({ sample: _, ...r }: RunResult) =>
  JSON.stringify(Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Math.round(v * 100) / 100])));

/**
 * Submits `count` messages to Postfix's smtpd over `connections` pipelining sessions and waits until
 * the sink has them all; `check` looks at each one that arrives (null: fine).
 */
async function relay(
  o: { sink: PostfixPhaseSink; port: number; connections: number; instance: Instance; opendkimPid?: number },
  tag: string,
  count: number,
  check: (raw: Buffer) => string | null,
): Promise<RunResult> {
  const messages = Array.from({ length: count }, (_, i) => message(tag, i));
  const sessions = await Promise.all(
    Array.from({ length: Math.min(o.connections, count) }, () => SmtpSession.open(o.port)),
  );
  const broken: Error[] = [];
  for (const s of sessions) (s as unknown as { socket: Socket }).socket.on('error', (e) => broken.push(e));
  try {
    return await relayOver(sessions, o, tag, messages, check, broken);
  } catch (e) {
    // replies that will never come: the sockets go now, before Postfix is stopped under them
    for (const s of sessions) (s as unknown as { socket: Socket }).socket.destroy();
    throw e;
  }
}

async function relayOver(
  sessions: SmtpSession[],
  o: { sink: PostfixPhaseSink; instance: Instance; opendkimPid?: number },
  tag: string,
  messages: Array<{ from: string; to: string; raw: string }>,
  check: (raw: Buffer) => string | null,
  broken: Error[],
): Promise<RunResult> {
  const count = messages.length;
  const scanFrom = o.sink.messages.length;
  const [cpu0, self0, dkim0] = [machineCpu(), process.cpuUsage(), o.opendkimPid ? processCpuSeconds(o.opendkimPid) : 0];
  const t0 = performance.now();
  let next = 0;
  let submitted = 0;
  const sent = Promise.all(
    sessions.map(async (session) => {
      while (next < messages.length) {
        const m = messages[next++];
        const reply = await session.send(m.from, [m.to], m.raw);
        if (!reply.startsWith('250')) throw new Error(`postfix refused a message: ${reply}\n${o.instance.log()}`);
      }
    }),
  ).then(() => (submitted = performance.now()));
  // count this run's messages at the sink as they arrive
  let scanned = scanFrom;
  let arrived = 0;
  const sample: Buffer[] = [];
  let last = 0;
  let quietSince = Date.now();
  // a holder, not a `let`: TypeScript does not see the callback's assignment, and would narrow a `let` to null
  const failure: { error: Error | null } = { error: null };
  sent.catch((e: unknown) => (failure.error = e instanceof Error ? e : new Error(String(e))));
  const prefix = `${tag}-`;
  while (arrived < count) {
    if (failure.error) throw failure.error;
    if (broken.length)
      throw new Error(`a connection to postfix's smtpd failed: ${broken[0].message}\n${o.instance.log()}`);
    const all = o.sink.messages;
    for (; scanned < all.length; scanned++) {
      const m = all[scanned];
      if (!m.envelope.to[0]?.startsWith(prefix)) continue;
      const problem = check(m.raw);
      if (problem) throw new Error(`${problem}:\n${m.raw.toString('utf8').slice(0, 2000)}`);
      if (arrived === 0 || arrived === count - 1) sample.push(m.raw);
      arrived++;
    }
    if (arrived >= count) break;
    if (arrived !== last) [last, quietSince] = [arrived, Date.now()];
    else if (Date.now() - quietSince > 60_000)
      throw new Error(
        `postfix: the sink has ${arrived} of the ${count} messages and got none for a minute; the instance's log ends:\n${o.instance.log()}`,
      );
    await sleep(10);
  }
  const seconds = (performance.now() - t0) / 1000;
  await sent;
  await Promise.all(sessions.map((s) => s.close()));
  const cpu1 = machineCpu();
  const self = process.cpuUsage(self0);
  return {
    per_s: count / seconds,
    seconds,
    submitted_per_s: count / ((submitted - t0) / 1000),
    machine_cores: cpu1.busy - cpu0.busy > 0 ? (cpu1.busy - cpu0.busy) / 100 / seconds : 0,
    bench_process_cores: (self.user + self.system) / 1e6 / seconds,
    ...(o.opendkimPid ? { opendkim_cores: (processCpuSeconds(o.opendkimPid) - dkim0) / seconds } : {}),
    sample,
  };
}

/** One message of the shape Posthorn's delivery phase sends: text + html, one recipient at d0..d9.bench.test. */
function message(tag: string, i: number): { from: string; to: string; raw: string } {
  const to = `${tag}-${i}@d${i % 10}.bench.test`;
  const boundary = `=_${tag}_${i}`;
  const raw = [
    `From: Shop <orders@${SIGNING_DOMAIN}>`,
    `To: ${to}`,
    `Subject: Delivery ${i}`,
    `Date: ${new Date().toUTCString().replace('GMT', '+0000')}`,
    `Message-ID: <${tag}.${i}@${SIGNING_DOMAIN}>`,
    'MIME-Version: 1.0',
    `Content-Type: multipart/alternative; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 7bit',
    '',
    TEXT,
    `--${boundary}`,
    'Content-Type: text/html; charset=utf-8',
    'Content-Transfer-Encoding: 7bit',
    '',
    `<p>${TEXT}</p>`,
    `--${boundary}--`,
    '',
  ].join('\r\n');
  return { from: `orders@${SIGNING_DOMAIN}`, to, raw };
}

function hasDkimSignature(raw: Buffer): boolean {
  const end = raw.indexOf('\r\n\r\n');
  return /(^|\r\n)DKIM-Signature:/i.test(raw.subarray(0, end < 0 ? raw.length : end).toString('latin1'));
}

/** OpenDKIM's configuration and a fresh RSA-2048 key in `dir`; the public key for verifying what it signed. */
function writeOpenDkimConfig(dir: string, socket: string): { publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyFile = join(dir, 'dkim.key');
  writeFileSync(keyFile, privateKey.export({ type: 'pkcs1', format: 'pem' }), { mode: 0o600 });
  const conf = {
    Mode: 's',
    Domain: SIGNING_DOMAIN,
    Selector: SELECTOR,
    KeyFile: keyFile,
    Socket: socket,
    // a Unix socket that Postfix's daemons (the postfix user) may connect to
    UMask: '0111',
    PidFile: join(dir, 'opendkim.pid'),
    Canonicalization: 'relaxed/relaxed',
    SignatureAlgorithm: 'rsa-sha256',
    InternalHosts: '127.0.0.1',
    Syslog: 'no',
    // the key is a fresh one in a folder of root's, but that folder is in /tmp, which everyone may write
    // to: OpenDKIM's check of the key's path would refuse it
    RequireSafeKeys: 'false',
  };
  writeFileSync(
    join(dir, 'opendkim.conf'),
    Object.entries(conf)
      .map(([k, v]) => `${k} ${v}\n`)
      .join(''),
  );
  return { publicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64') };
}

/** Checks one message's DKIM signature with mailauth, answering the key query itself (no DNS). */
async function verifySignature(raw: Buffer, publicKey: string): Promise<void> {
  const name = `${SELECTOR}._domainkey.${SIGNING_DOMAIN}`;
  const res = await dkimVerify(raw, {
    resolver: async (domain: string, type: string) => {
      if (type === 'TXT' && domain.toLowerCase() === name) return [[`v=DKIM1; k=rsa; p=${publicKey}`]];
      throw Object.assign(new Error(`no ${type} record for ${domain}`), { code: 'ENOTFOUND' });
    },
  });
  const results = res.results.map((r) => `${r.signingDomain}:${r.status?.result}`);
  if (results.join() !== `${SIGNING_DOMAIN}:pass`)
    throw new Error(`OpenDKIM's signature did not verify: ${JSON.stringify(res.results)}`);
}

/** Resolves once something accepts connections at `where`; fails if `child` exits first. */
async function listening(
  where: { path: string } | { host: string; port: number },
  child: ChildProcess,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`opendkim exited (${child.exitCode ?? child.signalCode}): ${output()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(where);
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`opendkim does not listen at ${JSON.stringify(where)}: ${output()}`);
    await sleep(50);
  }
}

function freePort(taken: Set<number>): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => {
        if (taken.has(port)) {
          freePort(taken).then(resolve, reject);
        } else {
          taken.add(port);
          resolve(port);
        }
      });
    });
  });
}

/** The machine's busy CPU time so far, in clock ticks (Linux /proc/stat; 0 elsewhere). */
function machineCpu(): { busy: number } {
  try {
    const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]
      .trim()
      .split(/\s+/)
      .map(Number);
    return { busy: user + nice + system + irq + softirq + steal };
  } catch {
    return { busy: 0 };
  }
}

function processCpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /, '')
      .split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** A process that exists and is not a zombie (a daemon whose parent is gone may stay one until init reaps it). */
function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '')[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Processes whose working directory is in `dir` (Linux /proc): the instance's daemons. */
function processesIn(dir: string): number[] {
  const out: number[] = [];
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return out;
  }
  for (const p of pids) {
    try {
      const cwd = readlinkSync(`/proc/${p}/cwd`);
      if ((cwd === dir || cwd.startsWith(`${dir}/`)) && alive(Number(p))) out.push(Number(p));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
