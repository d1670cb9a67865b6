// npm run bench — the throughput figures the issues ask for, measured in one run:
//   1. durable accepts/s and p50/p99 of POST /v1/emails with 64 concurrent clients (test key; live key, verified domain);
//      accept-batch: emails/s through POST /v1/emails/batch against one email a request (bench/batch-phase.ts)
//   2. live DKIM-signed deliveries/s to a local smtp-server sink, 1 and 10 recipient domains; then
//      (delivery-shaping) 10 domains with traffic shaping on and off (outbound.shaping), interleaved pairs
//   3. events delivered/s to a local HTTPS webhook receiver: one endpoint, then ten of which one answers
//      in 2 s (bench/webhook-phase.ts)
//   4. templates: renders/s of a typical template on one core (in this process), and template sends
//      against plain sends of the same content in the accept phase (test key)
//   5. inbound: bounce DSNs received and applied per second; submission: messages accepted durably per
//      second over SMTP (bench/smtp-phases.ts), both over 64 reused connections (BENCH_SMTP_CONNECTIONS)
//   6. verify: a batch of 100 addresses on 100 domains not seen before (ms), and addresses/s in
//      batches of 100 once their domains are cached (bench/verify-phase.ts)
//   7. what the machine does alone, to read them against: the data disk's fsync rate (write + fsync
//      loop), a bare Koa app's requests/s under the same load, RSA-2048 signatures/s on one core
//   8. with BENCH_PRELOAD=N: the database is first filled with N emails of the test key's project and
//      their events, straight into the SQLite file before `serve` starts (bench/preload.ts; half of
//      them older than retention.days), so that the accept phases measure a full database; and the
//      accept-pruning phase measures test-key accepts/s while the appliance's retention job prunes the
//      old half, and the pruning rate in rows/s (bench/pruning-phase.ts)
//   9. postfix: a private Postfix relaying the delivery phase's messages to the same sink, without and
//      with OpenDKIM, when both are installed (bench/postfix-phase.ts; the bench installs nothing)
//  10. dashboard: each dashboard page with sample data, a first visit in headless Chromium: the median
//      time to interactive and to load, and the bytes transferred (bench/dashboard-phase.ts; an
//      appliance of its own in this process; skipped when Chromium is absent)
//  12. webhooks-pg (only when BENCH_PG_URL or POSTHORN_TEST_PG_URL names a PostgreSQL server, or when
//      asked for by BENCH_PHASES): webhook events/s and the delay from event to delivery by two nodes
//      on one fresh PostgreSQL database, beside the same workload on this run's SQLite appliance
//      (bench/webhooks-pg-phase.ts)
//  11. broadcast: a broadcast to 100,000 test contacts (BENCH_BROADCAST_CONTACTS), emails fanned out
//      per second, while transactional test-key sends run at 500/s beside it: their p99 latency
//      (bench/broadcast-phase.ts)
// The appliance runs as its own `posthorn serve` process; the load, the DNS, the sink and the receiver run here.
import { BATCH_SIZE, batchPhase, type BatchPhaseResult } from './batch-phase.js';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  fsyncSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  writeFileSync,
  writeSync,
  rmSync,
} from 'node:fs';
import { generateKeyPairSync, sign } from 'node:crypto';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { Pool } from 'undici';
import Database from 'better-sqlite3';
import YAML from 'yaml';
import { startDnsWorld } from '../test/helpers/dns-world.js';
import { startSink } from '../test/helpers/smtp-sink.js';
import { startReceiver } from '../test/helpers/https-receiver.js';
import { PACKAGE_ROOT } from '../src/config/package-root.js';
import { compileVersion, declaredOf } from '../src/modules/sending/templates/versions.js';
import { renderVersion } from '../src/modules/sending/templates/render-version.js';
import type { TemplateVersion } from '../src/modules/sending/templates/template.js';
import { TYPICAL_TEMPLATE, TYPICAL_VARIABLES } from './typical-template.js';
import { inboundPhase, submissionPhase } from './smtp-phases.js';
import { verifyPhase } from './verify-phase.js';
import { webhookPhases } from './webhook-phase.js';
import { postfixPhase } from './postfix-phase.js';
import { dashboardPhase } from './dashboard-phase.js';
import { targetTable } from './targets.js';
import { preload } from './preload.js';
import { pruningPhase } from './pruning-phase.js';
import { broadcastPhase } from './broadcast-phase.js';
import { webhooksPgPhase } from './webhooks-pg-phase.js';

const BIN = join(PACKAGE_ROOT, 'bin', 'run.js');
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
// Unmeasured accepts before the first accept phase (BENCH_ACCEPT_WARMUP seconds, 3 unless set): see docs/benchmark.md.
const ACCEPT_WARMUP_SECONDS = Number(process.env.BENCH_ACCEPT_WARMUP ?? 3);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 64);
// Messages sent to each SMTP listener before its figure is taken (half as many DSNs), as the accept
// phase warms up: the first thousand messages of a fresh process run before V8 has optimised the parsers.
const SMTP_WARMUP = 1000;
// SMTP sessions per destination (outbound.max_connections_per_domain; the appliance's default is 5, Postfix's 20)
const PER_DOMAIN = Number(process.env.BENCH_CONNECTIONS ?? 10);
// BENCH_PHASES=accept,delivery,webhooks picks phases (accept-test, accept-live: one half of accept);
// BENCH_PROFILE=DIR writes a CPU profile of the appliance there. For experiments (the issues' figures
// use none of them): BENCH_CLIENTS (64), BENCH_NODE_ARGS (flags for the appliance's node, e.g.
// --trace-gc), BENCH_SERVE_LOG=FILE (a copy of the appliance's stdout), BENCH_QUICK=1 (no calibration).
// BENCH_PRELOAD=N fills the database with N emails first (1000000 for issue 24's figure); the default
// phases then include accept-pruning.
const PRELOAD = Number(process.env.BENCH_PRELOAD ?? 0);
const PG_URL = process.env.BENCH_PG_URL ?? process.env.POSTHORN_TEST_PG_URL;
const phases = new Set(
  (
    process.env.BENCH_PHASES ??
    `accept,accept-batch,${PRELOAD ? 'accept-pruning,' : ''}templates,delivery,delivery-shaping,postfix,webhooks,inbound,submission,verify,dashboard,broadcast${PG_URL ? ',webhooks-pg' : ''}`
  ).split(','),
);

function fsyncRate(dir: string, ms = 3000): number {
  const file = join(dir, 'fsync.bin');
  const fd = openSync(file, 'w');
  const block = Buffer.alloc(4096, 1);
  let n = 0;
  const end = Date.now() + ms;
  while (Date.now() < end) {
    writeSync(fd, block, 0, block.length, (n % 256) * 4096);
    fsyncSync(fd);
    n++;
  }
  closeSync(fd);
  rmSync(file);
  return n / (ms / 1000);
}

async function cli(config: string, args: string[]): Promise<any> {
  const child = spawn(process.execPath, [BIN, ...args, '--config', config, '--json'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  await once(child, 'exit');
  return JSON.parse(out);
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Appliances started and not yet exited: a bench that fails part-way stops them as it exits. */
const served = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of served) child.kill('SIGKILL');
});

/** `key`: the test key of a start after the first, which prints none (nor the project's id) */
async function serve(
  config: string,
  port: number,
  known?: string,
): Promise<{ child: ChildProcess; key: string; projectId: string }> {
  const prof = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const flags = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...prof, ...flags, BIN, 'serve', '--config', config], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  served.add(child);
  child.once('exit', () => served.delete(child));
  let out = '';
  const copy = process.env.BENCH_SERVE_LOG;
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (copy) appendFileSync(copy, d);
  });
  for (;;) {
    const key = known ?? /ph_test_[A-Za-z0-9]{40}/.exec(out)?.[0];
    if (
      key &&
      (await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      ))
    )
      return { child, key, projectId: /created project "default" \(([^)]+)\)/.exec(out)?.[1] ?? '' };
    if (child.exitCode !== null) throw new Error(`serve exited:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** CPU seconds used so far by a process (Linux /proc; 0 elsewhere), to tell how many cores a phase kept busy. */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /, '')
      .split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** CPU seconds used so far by each thread of a process (Linux /proc; empty elsewhere). */
function threadCpuSeconds(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
        .replace(/^.*\) /, '')
        .split(' ');
      out.set(Number(tid), (Number(fields[11]) + Number(fields[12])) / 100);
      // the appliance names its own threads (lib/thread.ts nameThisThread); V8's and libuv's keep node's
      threadNames.set(Number(tid), readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim());
    }
  } catch {
    // the process is gone, or this is not Linux
  }
  return out;
}

/**
 * Where the appliance's CPU went during a phase, in microseconds per request: its main thread (HTTP),
 * its busiest other thread (the background thread: the store, the MTA) and all the rest (the fsync
 * and checkpoint threads, V8's garbage collector threads): which thread a figure is limited by.
 */
const threadNames = new Map<number, string>();

function cpuPerRequest(
  before: Map<number, number>,
  after: Map<number, number>,
  pid: number,
  requests: number,
): { main: number; busiest_worker: number; rest: number; by_thread: Record<string, number> } {
  const used = [...after].map(([tid, s]) => [tid, s - (before.get(tid) ?? 0)] as const);
  const per = (s: number) => Math.round((s / Math.max(1, requests)) * 1e6);
  const main = used.find(([tid]) => tid === pid)?.[1] ?? 0;
  const workers = used
    .filter(([tid]) => tid !== pid)
    .map(([, s]) => s)
    .sort((a, b) => b - a);
  // by the threads' names: the MTA's background thread, the signing threads, the fsync thread, …;
  // 'other' is V8's (garbage collector, compiler) and libuv's pool
  const byName = new Map<string, number>();
  for (const [tid, s] of used) {
    const name = tid === pid ? 'main' : (threadNames.get(tid) ?? 'node');
    const key = name.startsWith('ph-') ? name.slice(3) : name === 'main' ? 'main' : 'other';
    byName.set(key, (byName.get(key) ?? 0) + s);
  }
  return {
    main: per(main),
    busiest_worker: per(workers[0] ?? 0),
    rest: per(workers.slice(1).reduce((a, b) => a + b, 0)),
    by_thread: Object.fromEntries([...byName].sort((a, b) => b[1] - a[1]).map(([k, s]) => [k, per(s)])),
  };
}

/** Bytes a process has had written to storage so far (Linux /proc; 0 elsewhere): the WAL, checkpoints, logs. */
function bytesWritten(pid: number): number {
  try {
    return Number(/^write_bytes: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Runs a phase and adds the cores the appliance and this load process kept busy meanwhile, and what the appliance wrote to disk. */
async function measured<T extends object>(
  appliancePid: number,
  phase: () => Promise<T>,
): Promise<
  T & {
    wall: number;
    appliance_cores: number;
    client_cores: number;
    appliance_disk_mb: number;
    appliance_cpu_us_per_request: ReturnType<typeof cpuPerRequest>;
  }
> {
  const [a0, c0, w0, t0, th0] = [
    cpuSeconds(appliancePid),
    cpuSeconds(process.pid),
    bytesWritten(appliancePid),
    performance.now(),
    threadCpuSeconds(appliancePid),
  ];
  const r = await phase();
  const wall = (performance.now() - t0) / 1000;
  const th1 = threadCpuSeconds(appliancePid);
  // a load run by a child process (wrk) reports the CPU time it used itself
  const { childCpuSeconds = 0, ...rest } = r as T & { childCpuSeconds?: number };
  const n = (r as { n?: number }).n ?? 0;
  return {
    ...(rest as T),
    wall,
    appliance_cores: (cpuSeconds(appliancePid) - a0) / wall,
    client_cores: (cpuSeconds(process.pid) - c0 + childCpuSeconds) / wall,
    appliance_disk_mb: (bytesWritten(appliancePid) - w0) / 1e6,
    appliance_cpu_us_per_request: cpuPerRequest(th0, th1, appliancePid, n),
  };
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

type LoadResult = {
  rate: number;
  p50: number;
  p99: number;
  n: number;
  errors: number;
  client: 'wrk' | 'undici';
  childCpuSeconds?: number;
};

/**
 * CLIENTS concurrent clients, each sending one request after the other for `seconds`. `body` is a
 * JSON template: @@I@@ becomes the request's number, @@D@@ that number modulo 10.
 *
 * The load shares the machine's two cores with the appliance, so the cheaper the client, the more
 * the figure says about the appliance: wrk (Debian's package) when it is installed, sending the
 * same bodies; undici in this process otherwise, or with BENCH_CLIENT=undici.
 */
async function acceptLoad(
  base: string,
  key: string,
  body: string,
  secs = seconds,
  path = '/v1/emails',
): Promise<LoadResult> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  if (useWrk) return wrkLoad(base, 'POST', path, headers, body, 202, secs);
  const r = await load(base, 202, (i) => ({ path, method: 'POST', headers, body: fill(body, i) }), secs);
  return { ...r, client: 'undici' };
}

const fill = (template: string, i: number) =>
  template.replaceAll('@@I@@', String(i)).replaceAll('@@D@@', String(i % 10));

const useWrk = process.env.BENCH_CLIENT !== 'undici' && spawnSync('wrk', ['--version']).error === undefined;

// wrk's Lua side: one thread, CLIENTS connections; the template is filled per request as fill() does.
// The client shares the two cores with the appliance, so it does as little as it can per request: the
// template is cut at its markers once, and each request only joins the pieces and puts the request
// line and headers (made once) in front. (A gsub over the whole body per request made LuaJIT half of
// wrk's time, ~20 µs a request, taken from the appliance.)
const WRK_SCRIPT = `
local pieces, head, fixed, i = {}, nil, nil, 0
function init(args)
  local f = assert(io.open(args[1], "r")); local template = f:read("*a"); f:close()
  local method, path, headers = args[2], args[3], {}
  for k = 4, #args, 2 do headers[args[k]] = args[k + 1] end
  if method == "GET" then fixed = wrk.format(method, path, headers); return end
  -- odd entries: text as it is; even entries: "I" or "D", the marker that stood there
  local pos = 1
  while true do
    local s, e, m = template:find("@@([ID])@@", pos)
    if not s then pieces[#pieces + 1] = template:sub(pos); break end
    pieces[#pieces + 1] = template:sub(pos, s - 1); pieces[#pieces + 1] = m
    pos = e + 1
  end
  -- the request line and headers without the blank line that ends them: Content-Length goes last
  head = wrk.format(method, path, headers):sub(1, -3)
end
function request()
  if fixed then return fixed end
  local parts, n, d = {}, tostring(i), tostring(i % 10)
  i = i + 1
  for k = 1, #pieces do
    local p = pieces[k]
    if k % 2 == 0 then p = (p == "I") and n or d end
    parts[k] = p
  end
  local body = table.concat(parts)
  return head .. "Content-Length: " .. #body .. "\\r\\n\\r\\n" .. body
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\n{"requests":%d,"duration_us":%d,"status_errors":%d,"socket_errors":%d,"p50_us":%d,"p99_us":%d}\\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout, latency:percentile(50), latency:percentile(99)))
end
`;

async function wrkLoad(
  base: string,
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string>,
  body: string,
  ok: number,
  secs = seconds,
): Promise<LoadResult> {
  // wrk counts only answers of 400 and above as errors: the expected status must be one of those below
  if (ok < 200 || ok > 299) throw new Error(`wrk cannot tell ${ok} from other answers below 400`);
  const dir = mkdtempSync(join(tmpdir(), 'posthorn-wrk-'));
  writeFileSync(join(dir, 'load.lua'), WRK_SCRIPT);
  writeFileSync(join(dir, 'body.json'), body);
  const args = [
    '-t1',
    `-c${CLIENTS}`,
    `-d${secs}s`,
    '--timeout',
    '10s',
    '-s',
    join(dir, 'load.lua'),
    base,
    '--',
    join(dir, 'body.json'),
    method,
    path,
    ...Object.entries(headers).flat(),
  ];
  // `times` prints the CPU time of the shell's children (wrk) once it has exited
  const child = spawn('sh', ['-c', 'wrk "$@" && times', 'sh', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  // 'close', not 'exit': stdout may still hold the last lines when the process has exited
  const [code] = await once(child, 'close');
  rmSync(dir, { recursive: true, force: true });
  const result = /\{"requests".*\}/.exec(out);
  if (code !== 0 || !result) throw new Error(`wrk failed (exit ${code}):\n${out}`);
  const r = JSON.parse(result[0]) as {
    requests: number;
    duration_us: number;
    status_errors: number;
    socket_errors: number;
    p50_us: number;
    p99_us: number;
  };
  // `times`: the shell's own user and system time, then its children's, on the last line
  const children = /(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/.exec(out);
  if (!children) throw new Error(`no CPU times after wrk's output:\n${out}`);
  const cpu = Number(children[1]) * 60 + Number(children[2]) + Number(children[3]) * 60 + Number(children[4]);
  const n = r.requests - r.status_errors;
  return {
    rate: n / (r.duration_us / 1e6),
    p50: r.p50_us / 1000,
    p99: r.p99_us / 1000,
    n,
    errors: r.status_errors + r.socket_errors,
    client: 'wrk',
    childCpuSeconds: cpu,
  };
}

async function load(
  base: string,
  ok: number,
  request: (i: number) => Parameters<Pool['request']>[0],
  secs = seconds,
): Promise<{ rate: number; p50: number; p99: number; n: number; errors: number }> {
  const pool = new Pool(base, { connections: CLIENTS, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  let i = 0;
  const end = Date.now() + secs * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (Date.now() < end) {
        const t0 = performance.now();
        const res = await pool.request(request(i++));
        await res.body.dump();
        if (res.statusCode === ok) latencies.push(performance.now() - t0);
        else errors++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  return {
    rate: latencies.length / elapsed,
    p50: pct(latencies, 50),
    p99: pct(latencies, 99),
    n: latencies.length,
    errors,
  };
}

/** RSA-2048 signatures per second on one core, as DKIM makes them (a parsed KeyObject). */
function rsaSignsPerSecond(ms = 2000): number {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const data = Buffer.alloc(600, 1);
  let n = 0;
  const end = Date.now() + ms;
  while (Date.now() < end) {
    sign('sha256', data, privateKey);
    n++;
  }
  return n / (ms / 1000);
}

/**
 * A bare Koa app in a process of its own: `get` answers a small JSON body to GET / (the machine's
 * HTTP figure); `post` reads and parses a JSON body and answers 202 with a small one, under the
 * same load as the test-key accept phase (same client, clients, path, headers and body): what an
 * accept would cost if it stored nothing.
 */
async function koaBaseline(kind: 'get' | 'post', body = ''): Promise<LoadResult> {
  const port = await freePort();
  const koa = join(PACKAGE_ROOT, 'node_modules', 'koa', 'dist', 'koa.mjs');
  const handler =
    kind === 'get'
      ? `(ctx) => { ctx.body = { status: 'ok' }; }`
      : `async (ctx) => { const chunks = []; for await (const c of ctx.req) chunks.push(c); const m = JSON.parse(Buffer.concat(chunks).toString('utf8')); ctx.status = 202; ctx.body = { id: 'em_' + String(m.subject).length, object: 'email', status: 'queued' }; }`;
  const code = `import Koa from ${JSON.stringify(koa)}; const app = new Koa(); app.use(${handler}); app.listen(${port}, '127.0.0.1', () => console.log('up'));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  // a child that dies first (its port taken meanwhile) must not leave the bench waiting for ever
  await Promise.race([
    once(child.stdout, 'data'),
    once(child, 'exit').then(([code]) => Promise.reject(new Error(`the Koa baseline exited (code ${code})`))),
  ]);
  const base = `http://127.0.0.1:${port}`;
  try {
    if (kind === 'post') return await acceptLoad(base, 'ph_test_koa', body);
    return useWrk
      ? await wrkLoad(base, 'GET', '/', {}, '', 200)
      : { ...(await load(base, 200, () => ({ path: '/', method: 'GET' }))), client: 'undici' };
  } finally {
    child.kill();
  }
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'posthorn-bench-'));
  const quick = Boolean(process.env.BENCH_QUICK);
  const fsync = quick ? null : fsyncRate(dir);
  const text = 'Hello, this is a transactional message of ordinary size.\n'.repeat(20);
  const testBody = JSON.stringify({
    from: 'Shop <orders@shop.bench.test>',
    to: ['user@@I@@@simulator.posthorn.test'],
    subject: 'Order @@I@@',
    text,
  });
  const koaPost = quick ? null : await koaBaseline('post', testBody);
  const calibration = quick
    ? {}
    : {
        rsa2048_signs_per_s_one_core: Math.round(rsaSignsPerSecond()),
        koa_hello_requests_per_s: Math.round((await koaBaseline('get')).rate),
        koa_post_202: { rate: koaPost!.rate, p50: koaPost!.p50, p99: koaPost!.p99, errors: koaPost!.errors },
      };
  const world = await startDnsWorld();
  const sink = await startSink();
  const hooks = await startReceiver();
  world.add('mx.sink.test', 'A', '127.0.0.1');
  world.add('hooks.test', 'A', '127.0.0.1');
  const domains = Array.from({ length: 10 }, (_, i) => `d${i}.bench.test`);
  for (const d of domains) world.add(d, 'MX', { exchange: 'mx.sink.test', priority: 10 });
  const config = join(dir, 'posthorn.yaml');
  const httpPort = await freePort();
  // a port just closed may be handed out again at once: the two must differ
  const taken = new Set([httpPort]);
  const another = async () => {
    let p = await freePort();
    while (taken.has(p)) p = await freePort();
    taken.add(p);
    return p;
  };
  const dnsPort = await another();
  const inboundPort = await another();
  const submissionPort = await another();
  const settings = {
    data_dir: './data',
    http: { host: '127.0.0.1', port: httpPort },
    // the phases open 64 sessions from one address (BENCH_SMTP_CONNECTIONS): past the default per-address cap
    smtp: {
      inbound: { host: '127.0.0.1', port: inboundPort },
      submission: { host: '127.0.0.1', port: submissionPort },
      max_clients_per_ip: 1000,
    },
    outbound: { hostname: 'mta.bench.test', mx_port: sink.port, max_connections_per_domain: PER_DOMAIN },
    dns: {
      resolvers: [world.address],
      zone: 'dkim.bench.test',
      server: { enabled: true, host: '127.0.0.1', port: dnsPort },
    },
    webhooks: { ca_file: hooks.caFile },
    network: { allow_private: true },
    limits: { requests_per_second: 1_000_000 },
    log: { level: 'warn' },
    // a preloaded database is pruned only in the accept-pruning phase, by a start of its own
    ...(PRELOAD ? { retention: { days: 0 } } : {}),
  };
  writeFileSync(config, YAML.stringify(settings));
  let app = await serve(config, httpPort);
  const base = `http://127.0.0.1:${httpPort}`;
  world.delegate('dkim.bench.test', '127.0.0.1', dnsPort);
  const step = (what: string) => process.stderr.write(`bench: ${what}\n`);
  step(`fsync ${fsync === null ? 'not measured' : `${Math.round(fsync)}/s`}; appliance up`);
  // BENCH_PRELOAD: the test-key figure on the empty database first, then the same after the preload,
  // so that their ratio is computed inside one run
  let emptyAccept: object | null = null;
  let preloaded: ReturnType<typeof preload> | null = null;
  if (PRELOAD) {
    step('accepts, test key, on the empty database (after a warm-up)');
    await acceptLoad(base, app.key, testBody, ACCEPT_WARMUP_SECONDS);
    emptyAccept = await measured(app.child.pid!, () => acceptLoad(base, app.key, testBody));
    step(`  ${JSON.stringify(emptyAccept)}`);
    app.child.kill('SIGTERM');
    await once(app.child, 'exit');
    preloaded = preloadDatabase(app.projectId);
    app = await serve(config, httpPort, app.key);
  }
  const project = await cli(config, ['project', 'create', '--name', 'bench', '--approved']);
  const live = (await cli(config, ['key', 'create', '--project', project.id, '--mode', 'live'])).key as string;
  const api = async (key: string, method: string, path: string, body?: unknown) => {
    const r = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return r.json() as Promise<any>;
  };
  const domain = await api(live, 'POST', '/v1/domains', { domain: 'shop.bench.test' });
  for (const r of domain.records)
    world.add(r.name, r.type, r.type === 'MX' ? { exchange: r.value, priority: 10 } : r.value);
  const verified = await api(live, 'POST', `/v1/domains/${domain.id}/verify`);
  if (verified.status !== 'verified') throw new Error(`domain not verified: ${JSON.stringify(verified)}`);

  const report: Record<string, unknown> = {
    ...(fsync === null ? {} : { machine_fsyncs_per_s: Math.round(fsync) }),
    ...calibration,
    load_client: useWrk ? 'wrk' : 'undici',
    smtp_sessions_per_domain: PER_DOMAIN,
  };
  if (preloaded) report.preload = preloaded;
  if (emptyAccept) report.accept_test_key_empty = emptyAccept;
  if (ACCEPT_WARMUP_SECONDS > 0 && [...phases].some((p) => p.startsWith('accept'))) {
    step(`accepts, warm-up (${ACCEPT_WARMUP_SECONDS} s, test key, not in the accept figures)`);
    const w = await acceptLoad(base, app.key, testBody, ACCEPT_WARMUP_SECONDS);
    // shown, not hidden: what a freshly started process does in its first seconds
    report.accept_warmup_test_key = {
      seconds: ACCEPT_WARMUP_SECONDS,
      rate: w.rate,
      p50: w.p50,
      p99: w.p99,
      n: w.n,
      errors: w.errors,
    };
    step(`  ${JSON.stringify(report.accept_warmup_test_key)}`);
  }
  if (phases.has('accept') || phases.has('accept-test')) {
    step('accepts, test key');
    const testAccept = await measured(app.child.pid!, () => acceptLoad(base, app.key, testBody));
    report.accept_test_key = testAccept;
    step(`  ${JSON.stringify(testAccept)}`);
  }
  if (phases.has('accept') || phases.has('accept-live')) {
    step('accepts, live key');
    const [delivered0, t0] = [sink.messages.length, Date.now()];
    const liveAccept = await measured(app.child.pid!, () =>
      acceptLoad(
        base,
        live,
        JSON.stringify({
          from: 'Shop <orders@shop.bench.test>',
          to: ['user@@I@@@d@@D@@.bench.test'],
          subject: 'Order @@I@@',
          text,
          html: `<p>${text}</p>`,
        }),
      ),
    );
    const during = sink.messages.slice(delivered0);
    // deliveries in the same phase, and how long accepted mail waited for them (Message-ID's time → arrival)
    report.accept_live_key = {
      ...liveAccept,
      deliveries_per_s: during.length / ((Date.now() - t0) / 1000),
      accept_to_delivered_ms: acceptToDelivered(during),
    };
    step(`  ${JSON.stringify(liveAccept)}`);
    // let the live accept run's deliveries finish before measuring delivery alone
    await sinkHas(liveAccept.n, 'the live accept phase');
  }
  if (phases.has('accept-batch')) {
    step(`accepts, one email a request against batches of ${BATCH_SIZE} (test key, interleaved)`);
    report.accept_batch = await batchPhase({
      load: (path, body, secs) => acceptLoad(base, app.key, body, secs, path),
      email: testBody,
      seconds,
      pairs: 3,
      step,
    });
    step(`  batch ÷ single emails/s: ${(report.accept_batch as BatchPhaseResult).ratio.toFixed(2)}`);
  }
  if (phases.has('accept-pruning')) {
    if (!PRELOAD) throw new Error('the accept-pruning phase needs BENCH_PRELOAD');
    const r = await pruningPhase({
      dbFile: join(dir, 'data', 'posthorn.sqlite'),
      async restart(retention) {
        app.child.kill('SIGTERM');
        await once(app.child, 'exit');
        writeFileSync(config, YAML.stringify({ ...settings, retention }));
        app = await serve(config, httpPort, app.key);
      },
      accept: (secs, measure) =>
        measure
          ? measured(app.child.pid!, () => acceptLoad(base, app.key, testBody, secs))
          : acceptLoad(base, app.key, testBody, secs),
      warmupSeconds: ACCEPT_WARMUP_SECONDS,
      seconds,
      step,
    });
    report.accept_test_key_while_pruning = r.accepts;
    report.pruning = r.pruning;
  }

  if (phases.has('templates')) await templatePhase();

  /** BENCH_PRELOAD: the emails and events of the project the first start's test key belongs to (`default`), the appliance stopped */
  function preloadDatabase(projectId: string) {
    process.stderr.write(`bench: preloading ${PRELOAD} emails and their events\n`);
    const r = preload({
      file: join(dir, 'data', 'posthorn.sqlite'),
      projectId,
      count: PRELOAD,
      oldShare: 0.5,
      text,
    });
    process.stderr.write(`bench:   ${JSON.stringify(r)}\n`);
    return r;
  }
  async function templatePhase() {
    step('templates: renders of the typical template on one core (variables checked, subject, html, text)');
    const version = typicalVersion();
    const rendered = renderVersion(version, TYPICAL_VARIABLES, null);
    const rate = (ms: number) => {
      let n = 0;
      const end = performance.now() + ms;
      while (performance.now() < end)
        for (let i = 0; i < 100; i++, n++) renderVersion(version, TYPICAL_VARIABLES, null);
      return n / (ms / 1000);
    };
    rate(1000);
    const rendersPerSecond = Math.round(rate(3000));
    report.template_renders_per_s = rendersPerSecond;
    step(`  ${rendersPerSecond}/s`);
    step('templates: template sends and plain sends of the same content, test key (A B B A)');
    const published = await api(app.key, 'POST', '/v1/templates', TYPICAL_TEMPLATE);
    if (published.version !== 1) throw new Error(`template not published: ${JSON.stringify(published)}`);
    const to = ['user@@I@@@simulator.posthorn.test'];
    const plain = JSON.stringify({
      from: 'Shop <orders@shop.bench.test>',
      to,
      subject: rendered.subject,
      html: rendered.html,
      text: rendered.text,
    });
    const templated = JSON.stringify({
      from: 'Shop <orders@shop.bench.test>',
      to,
      template_id: TYPICAL_TEMPLATE.id,
      variables: TYPICAL_VARIABLES,
    });
    const runs: Record<'plain' | 'template', Array<Awaited<ReturnType<typeof measured<LoadResult>>>>> = {
      plain: [],
      template: [],
    };
    for (const kind of ['plain', 'template', 'template', 'plain'] as const) {
      runs[kind].push(
        await measured(app.child.pid!, () =>
          acceptLoad(base, app.key, kind === 'plain' ? plain : templated, Math.max(2, seconds / 2)),
        ),
      );
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const summary = (kind: 'plain' | 'template') => ({
      rate: mean(runs[kind].map((r) => r.rate)),
      p99: Math.max(...runs[kind].map((r) => r.p99)),
      api_thread_us_per_request: mean(runs[kind].map((r) => r.appliance_cpu_us_per_request.main)),
      errors: runs[kind].reduce((n, r) => n + r.errors, 0),
    });
    const [a, b] = [summary('plain'), summary('template')];
    // the costs as percents of a plain send's (target: at most 120)
    report.template_sends = {
      plain: a,
      template: b,
      cost_percent_by_rate: Math.round((100 * a.rate) / b.rate),
      cost_percent_by_api_thread_cpu: Math.round((100 * b.api_thread_us_per_request) / a.api_thread_us_per_request),
    };
    step(`  ${JSON.stringify(report.template_sends)}`);
  }

  /** How many live recipients the appliance holds in each state, read from its database (read-only). */
  function recipientStates(): string {
    const db = new Database(join(dir, 'data', 'posthorn.sqlite'), { readonly: true });
    try {
      return JSON.stringify(
        db
          .prepare(
            `select r.status, count(*) as n from email_recipients r join emails e on e.id = r.email_id where e.environment = 'live' group by r.status`,
          )
          .all(),
      );
    } finally {
      db.close();
    }
  }

  /** Waits until the sink holds `count` messages; a message that never arrives fails the bench instead of leaving it waiting. */
  async function sinkHas(count: number, what: string): Promise<void> {
    let last = sink.messages.length;
    let quietSince = Date.now();
    while (sink.messages.length < count) {
      await new Promise((r) => setTimeout(r, 50));
      if (sink.messages.length !== last) [last, quietSince] = [sink.messages.length, Date.now()];
      // retries are a minute apart by default: two minutes without a message means one is stuck
      else if (Date.now() - quietSince > 120_000)
        throw new Error(
          `${what}: the sink has ${last} of the ${count} messages expected and got none for two minutes; the appliance's recipients: ${recipientStates()}`,
        );
    }
  }

  /** n live emails, each to one recipient at one of the first `spread` domains, sent by 16 clients; resolves once the sink has them all. */
  async function deliver(n: number, spread: number, tag: string): Promise<void> {
    const before = sink.messages.length;
    const pool = new Pool(base, { connections: 16 });
    await Promise.all(
      Array.from({ length: 16 }, async (_, w) => {
        for (let i = w; i < n; i += 16) {
          const res = await pool.request({
            path: '/v1/emails',
            method: 'POST',
            headers: { authorization: `Bearer ${live}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              from: 'orders@shop.bench.test',
              to: [`${tag}${i}@${domains[i % spread]}`],
              subject: `Delivery ${i}`,
              text,
              html: `<p>${text}</p>`,
            }),
          });
          await res.body.dump();
        }
      }),
    );
    await pool.close();
    await sinkHas(before + n, `${n} deliveries to ${spread} domain(s)`);
  }

  if (phases.has('delivery')) {
    // Unmeasured: the first thousand deliveries of a fresh process run slower (JIT, SMTP sessions
    // being opened, the signing thread's first keys), whichever phase comes first. After the live
    // accept phase this changes nothing; alone, it keeps the first phase from being measured cold.
    step('deliveries, warm-up (not measured)');
    await deliver(1000, 10, 'w');
  }
  for (const spread of phases.has('delivery') ? [1, 10] : []) {
    step(`deliveries, ${spread} domain(s)`);
    const n = 3000;
    const r = await measured(app.child.pid!, async () => {
      await deliver(n, spread, 'r');
      return { n };
    });
    const elapsed = r.wall;
    step(
      `  ${Math.round(n / elapsed)}/s, appliance ${r.appliance_cores.toFixed(2)} cores (µs per message ${JSON.stringify(r.appliance_cpu_us_per_request)}), ${((r.appliance_disk_mb * 1000) / n).toFixed(1)} KB written per message, load and sink ${r.client_cores.toFixed(2)} cores`,
    );
    report[`deliveries_per_s_${spread}_domain${spread > 1 ? 's' : ''}`] = Math.round(n / elapsed);
    // every thread's CPU per delivered message, the accept included (each delivery is a live send)
    report[`delivery_cpu_us_per_message_${spread}_domain${spread > 1 ? 's' : ''}`] = r.appliance_cpu_us_per_request;
    // what the appliance wrote per delivered message: the WAL's pages and the checkpoints' (a 2.8 KB message)
    report[`delivery_disk_kb_per_message_${spread}_domain${spread > 1 ? 's' : ''}`] = (r.appliance_disk_mb * 1000) / n;
  }

  if (phases.has('delivery-shaping')) {
    // Traffic shaping on (the default) against off (outbound.shaping: false), 10 domains, in
    // interleaved pairs of one run, each measured after 500 unmeasured deliveries of its own start.
    step('deliveries with traffic shaping on and off, 10 domains, interleaved pairs');
    const rates: Record<'on' | 'off', number[]> = { on: [], off: [] };
    const restartWith = async (shaping: boolean) => {
      app.child.kill('SIGTERM');
      await once(app.child, 'exit');
      writeFileSync(config, YAML.stringify({ ...settings, outbound: { ...settings.outbound, shaping } }));
      app = await serve(config, httpPort, app.key);
    };
    for (const [round, order] of [
      [false, true],
      [true, false],
    ].entries()) {
      for (const shaping of order) {
        await restartWith(shaping);
        await deliver(500, 10, `sw${round}${shaping ? 'on' : 'off'}`);
        const n = 3000;
        const r = await measured(app.child.pid!, async () => {
          await deliver(n, 10, `s${round}${shaping ? 'on' : 'off'}`);
          return { n };
        });
        rates[shaping ? 'on' : 'off'].push(n / r.wall);
        step(`  shaping ${shaping ? 'on' : 'off'}: ${Math.round(n / r.wall)}/s`);
      }
    }
    writeFileSync(config, YAML.stringify(settings));
    await restartWith(true);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    report.delivery_shaping = {
      on_per_s: rates.on.map(Math.round),
      off_per_s: rates.off.map(Math.round),
      on_vs_off: Number((mean(rates.on) / mean(rates.off)).toFixed(3)),
    };
  }

  if (phases.has('inbound')) {
    // the DSNs are about live mail the sink received; delivered here when no delivery phase ran
    if (sink.messages.length < 3000 + SMTP_WARMUP / 2) await deliver(3000 + SMTP_WARMUP / 2, 10, 'ib');
    step(`inbound: bounce DSNs to the VERP addresses, received and applied (after ${SMTP_WARMUP / 2} unmeasured)`);
    const dbFile = join(dir, 'data', 'posthorn.sqlite');
    await inboundPhase({ port: inboundPort, delivered: sink.messages.slice(-3000 - SMTP_WARMUP / 2, -3000), dbFile });
    const r = await measured(app.child.pid!, () =>
      inboundPhase({ port: inboundPort, delivered: sink.messages.slice(-3000), dbFile }),
    );
    report.inbound_dsns = r;
    step(`  ${JSON.stringify(r)}`);
  }
  if (phases.has('submission')) {
    step(`submission: messages over SMTP with a test key, accepted durably (after ${SMTP_WARMUP} unmeasured)`);
    await submissionPhase({ port: submissionPort, key: app.key, count: SMTP_WARMUP });
    const r = await measured(app.child.pid!, () =>
      submissionPhase({ port: submissionPort, key: app.key, count: Math.max(3000, seconds * 1000) }),
    );
    report.submission = r;
    step(`  ${JSON.stringify(r)}`);
  }

  if (phases.has('postfix')) {
    // Postfix relaying the same messages to the same sink, with and without OpenDKIM, when installed
    const r = await postfixPhase({ sink, step });
    report.postfix = r.available
      ? {
          relay_per_s: Math.round(r.relay_per_s),
          relay_dkim_per_s: Math.round(r.relay_dkim_per_s),
          version: r.postfix_version,
          opendkim: r.opendkim_version,
        }
      : r;
    step(`  ${JSON.stringify(report.postfix)}`);
  }
  if (phases.has('webhooks')) await webhookPhase();
  if (phases.has('verify')) {
    step('verify: batches of 100 addresses on 100 new domains each, then the same domains cached');
    report.verify = await verifyPhase({ base, key: app.key, world, seconds: Math.max(3, seconds / 2) });
    step(`  ${JSON.stringify(report.verify)}`);
  }
  if (phases.has('broadcast')) {
    const r = await measured(app.child.pid!, () =>
      broadcastPhase({ base, dir, bin: BIN, config, api, cli: (args) => cli(config, args), step }),
    );
    report.broadcast = r;
    step(`  ${JSON.stringify(r)}`);
  }
  if (phases.has('webhooks-pg')) {
    if (!PG_URL) throw new Error('the webhooks-pg phase needs BENCH_PG_URL (or POSTHORN_TEST_PG_URL)');
    const r = await webhooksPgPhase({
      sqlite: { base, key: app.key },
      pgUrl: PG_URL,
      dir,
      hooks,
      api: async (at, key, method, path, body) => {
        const res = await fetch(at + path, {
          method,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          ...(body ? { body: JSON.stringify(body) } : {}),
        });
        return res.json();
      },
      freePort: another,
      serve: async (nodeConfig, port, known) => {
        const { child, key } = await serve(nodeConfig, port, known);
        return {
          pid: child.pid!,
          key,
          stop: async () => {
            if (child.exitCode !== null) return;
            child.kill('SIGTERM');
            await once(child, 'exit');
          },
        };
      },
      settings: { ...settings, dns: { resolvers: [world.address], zone: 'dkim.bench.test' } },
      step,
    });
    report.webhooks_pg = r;
  }
  if (phases.has('dashboard')) {
    step('dashboard: each page with sample data, a first visit in headless Chromium (median of 5)');
    report.dashboard = await dashboardPhase();
    step(`  ${JSON.stringify(report.dashboard)}`);
  }
  async function webhookPhase() {
    const r = await measured(app.child.pid!, () => webhookPhases({ base, key: app.key, api, hooks, step }));
    report.webhook_events_per_s = Math.round(r.one_endpoint.per_s);
    report.webhook_events_ten_endpoints = r.ten_endpoints;
    step(`  ${JSON.stringify(r)}`);
  }

  app.child.kill('SIGTERM');
  await once(app.child, 'exit');
  await Promise.all([sink.stop(), hooks.stop(), world.stop()]);
  rmSync(dir, { recursive: true, force: true });
  const round = (x: unknown) =>
    typeof x === 'object' && x
      ? Object.fromEntries(Object.entries(x).map(([k, v]) => [k, typeof v === 'number' ? Math.round(v * 10) / 10 : v]))
      : x;
  // issue 24's targets beside the figures (on stderr: stdout is the JSON report)
  process.stderr.write(`\n${targetTable(report, availableParallelism())}\n\n`);
  console.log(JSON.stringify(Object.fromEntries(Object.entries(report).map(([k, v]) => [k, round(v)])), null, 2));
}

/**
 * The median and p90 of (arrival at the sink − acceptance) in ms: a live email's Message-ID is
 * <ULID@host>, and a ULID starts with its 48-bit millisecond time in 10 Crockford base32 digits.
 */
function acceptToDelivered(messages: Array<{ raw: Buffer; at: number }>): { p50: number; p90: number } | null {
  const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
  const waits: number[] = [];
  for (const m of messages) {
    const id = /^Message-ID: <([0-9a-z]{26})@/im.exec(m.raw.subarray(0, 4096).toString('latin1'))?.[1]?.toLowerCase();
    if (!id) continue;
    let t = 0;
    for (const c of id.slice(0, 10)) t = t * 32 + alphabet.indexOf(c);
    waits.push(m.at - t);
  }
  if (!waits.length) return null;
  waits.sort((a, b) => a - b);
  return { p50: pct(waits, 50), p90: pct(waits, 90) };
}

/** The typical template as a send renders it: compiled once, as a publish stores it. */
function typicalVersion(): TemplateVersion {
  const content = {
    subject: TYPICAL_TEMPLATE.subject,
    html: TYPICAL_TEMPLATE.html,
    text: TYPICAL_TEMPLATE.text,
    design: null,
    translations: {},
    variables: declaredOf(TYPICAL_TEMPLATE.variables as never),
  };
  return {
    ...content,
    compiled: compileVersion(content),
    templateUid: 'tpl_bench',
    templateId: TYPICAL_TEMPLATE.id,
    version: 1,
    restoredFrom: null,
    createdAt: 0,
  };
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
