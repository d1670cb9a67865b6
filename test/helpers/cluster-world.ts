import { startServe, writeConfig, runCli, type ServeProcess } from './process.js';
import { client } from './http.js';
import { freshPg, type TestDatabase } from './databases.js';
import { startDnsWorld, type DnsWorld } from './dns-world.js';
import { startSink, type SmtpSink } from './smtp-sink.js';
import { routeSinkDomains, verifiedDomain } from './live.js';
import { startReceiver, type HttpsReceiver } from './https-receiver.js';
import type { Tenant } from './api.js';

/** cluster.dead_after of the nodes the cluster tests start */
export const DEAD_AFTER_S = 5;

/**
 * What the tests of several `serve` processes on one PostgreSQL database
 * share: a fresh database, the public DNS, the SMTP sink, a second sink on
 * 127.0.0.2 for tarpit.test whose first connection waits for its greeting
 * (connected, no SMTP transaction begun), the HTTPS webhook receiver, and
 * the nodes started, killed at the end.
 */
export interface ClusterWorld {
  db: TestDatabase;
  world: DnsWorld;
  sink: SmtpSink;
  tarpit: SmtpSink;
  hooks: HttpsReceiver;
  base: Record<string, unknown>;
  serve(): Promise<ServeProcess>;
  cli(args: string[]): ReturnType<typeof runCli>;
  /** a project with a live key and a verified sending domain, made through the CLI and the API of `baseUrl` */
  tenant(baseUrl: string, name?: string): Promise<{ t: Tenant; key: string; from: string }>;
  /** kills the nodes (printing their warnings and errors when `failed`), stops the peers, drops the database */
  stop(failed: boolean): Promise<void>;
}

export async function startClusterWorld(): Promise<ClusterWorld> {
  const db = await freshPg();
  const world = await startDnsWorld();
  const sink = await startSink();
  const hooks = await startReceiver();
  const tarpit = await startSink({ host: '127.0.0.2', port: sink.port, holdFirstGreetingMs: 60_000 });
  routeSinkDomains(world);
  world.add('tarpit.test', 'MX', { exchange: 'mx.tarpit.test', priority: 10 });
  world.add('mx.tarpit.test', 'A', '127.0.0.2');
  world.add('hooks.test', 'A', '127.0.0.1');
  const base = {
    database: { client: 'pg', url: db.options.url },
    cluster: { dead_after: `${DEAD_AFTER_S}s` },
    outbound: { hostname: 'mta.cluster.test', mx_port: sink.port },
    dns: { resolvers: [world.address], zone: 'dkim.cluster.test' },
    smtp: { inbound: { enabled: false }, submission: { enabled: false } },
    network: { allow_private: true },
    // a held webhook POST stays held until its node dies, however slow the machine makes the test's next steps
    webhooks: { ca_file: hooks.caFile, timeout_ms: 120_000 },
    limits: { requests_per_second: 100_000 },
  };
  const running: ServeProcess[] = [];
  const cli = (args: string[]) => runCli([...args, '--config', writeConfig(base).path]);
  return {
    db,
    world,
    sink,
    tarpit,
    hooks,
    base,
    cli,
    async serve() {
      const p = await startServe(writeConfig(base).path);
      running.push(p);
      return p;
    },
    async tenant(baseUrl, name = 'cluster') {
      const project = (await cli(['project', 'create', '--name', name, '--approved', '--json'])).json;
      const key = (await cli(['key', 'create', '--project', project.id, '--mode', 'live', '--json'])).json
        .key as string;
      const t = { api: client(baseUrl, key) } as Tenant;
      const d = await verifiedDomain(t, world);
      return { t, key, from: `a@${d.domain}` };
    },
    async stop(failed) {
      if (failed)
        for (const p of running)
          console.log(
            p
              .output()
              .split('\n')
              .filter((l) => /"level":[456]0/.test(l))
              .join('\n'),
          );
      await Promise.all(running.splice(0).map((p) => p.stop('SIGKILL')));
      await hooks.stop();
      await tarpit.stop();
      await sink.stop();
      await world.stop();
      await db.drop();
    },
  };
}

/** A suite's mocha hooks: a fresh ClusterWorld for each test, stopped after it; the getter gives the current one. */
export function eachClusterWorld(): () => ClusterWorld {
  let c: ClusterWorld;
  beforeEach(async function () {
    c = await startClusterWorld();
  });
  afterEach(async function () {
    await c.stop(this.currentTest?.state === 'failed');
  });
  return () => c;
}
