import { authenticate } from 'mailauth';
import { expect } from 'chai';
import { createResolver } from '../../src/dns/resolver.js';
import type { RoleSelection } from '../../src/start-roles.js';
import type { Clock } from '../../src/lib/time.js';
import { startTestApi, type TestApi, type Tenant } from './api.js';
import { freshDatabase, type DatabaseKind, type TestDatabase } from './databases.js';
import { startDnsWorld, type DnsWorld } from './dns-world.js';
import { startSink, type SmtpSink } from './smtp-sink.js';
import type { Client } from './http.js';
import { waitFor } from './wait.js';

export const SINK_DOMAINS = [
  'ok.test',
  'ok2.test',
  'reject.test',
  'blocklist.test',
  'full.test',
  'tempfail.test',
  'drop.test',
  'cut.test',
  'slow.test',
  'enforced.test',
];

/** Point the sink domains' MX at the sink (mx.sink.test → 127.0.0.1). */
export function routeSinkDomains(world: DnsWorld): void {
  for (const d of SINK_DOMAINS) world.add(d, 'MX', { exchange: 'mx.sink.test', priority: 10 });
  world.add('mx.sink.test', 'A', '127.0.0.1');
}

let seq = 0;

/**
 * A sending domain of the tenant, its records published in the world DNS and
 * verified; `requiredOnly` publishes the three DKIM CNAMEs and nothing else.
 */
export async function verifiedDomain(
  t: Tenant,
  world: DnsWorld,
  opts: Record<string, unknown> = {},
  requiredOnly = false,
): Promise<{
  id: string;
  domain: string;
  records: Array<{ name: string; type: string; value: string; required: boolean }>;
}> {
  const res = await t.api.post('/v1/domains', { domain: `s${Date.now().toString(36)}${++seq}.send.test`, ...opts });
  expect(res.status, res.text).to.equal(201);
  for (const r of res.body.records as Array<{
    name: string;
    type: 'CNAME' | 'MX' | 'TXT';
    value: string;
    required: boolean;
  }>) {
    if (requiredOnly && !r.required) continue;
    world.add(r.name, r.type, r.type === 'MX' ? { exchange: r.value, priority: 10 } : r.value);
  }
  const v = await t.api.post(`/v1/domains/${res.body.id}/verify`);
  expect(v.body.status, v.text).to.equal('verified');
  return v.body;
}

/** A live receipt from `from` to `to`, accepted (202); its id. */
export async function sendReceipt(api: Client, from: string, to: string): Promise<string> {
  const r = await api.post('/v1/emails', { from, to: [to], subject: 'Your receipt', text: 'Thanks' });
  expect(r.status, r.text).to.equal(202);
  return r.body.id as string;
}

/** The reply the email's first email.delivery_delayed event carries, once there is one. */
export function delayReason(api: Client, id: string, ms = 15_000): Promise<string> {
  return waitFor(
    async () => {
      const events = (await api.get(`/v1/emails/${id}/events`)).body.data as Array<{
        type: string;
        data: { details: { diagnostic?: string } };
      }>;
      return events.find((e) => e.type === 'email.delivery_delayed')?.data.details.diagnostic;
    },
    ms,
    `email ${id} delayed`,
  );
}

/** A dashboard page as the tenant of `key` sees it, signed in with the key (docs/dashboard.md). */
export async function dashboardPage(baseUrl: string, key: string, path: string): Promise<string> {
  const r = await fetch(`${baseUrl}/dashboard/sign-in`, {
    method: 'POST',
    body: new URLSearchParams({ key }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    redirect: 'manual',
  });
  expect(r.status).to.equal(303);
  const cookie = r.headers.get('set-cookie')!.split(';')[0];
  return (await fetch(`${baseUrl}/dashboard${path}`, { headers: { cookie } })).text();
}

export async function waitEmail(api: Client, id: string, pred: (e: any) => boolean, ms = 15_000): Promise<any> {
  return waitFor(
    async () => {
      const r = await api.get(`/v1/emails/${id}`);
      return pred(r.body) ? r.body : null;
    },
    ms,
    `email ${id} to reach the expected state`,
  );
}

/** DKIM as a receiver checks it: mailauth resolving through the world DNS (and the appliance's zone behind the CNAMEs). */
export async function dkimResults(world: DnsWorld, raw: Buffer): Promise<string[]> {
  const r = createResolver({ servers: [world.address] });
  const res = await authenticate(raw, {
    ip: '127.0.0.1',
    helo: 'mta.appliance.test',
    mta: 'mx.sink.test',
    disableArc: true,
    disableBimi: true,
    disableDmarc: true,
    resolver: async (name: string, type: string) =>
      type === 'TXT' ? r.resolveTxt(name) : type === 'MX' ? r.resolveMx(name) : r.resolve4(name),
  } as Parameters<typeof authenticate>[1]);
  return (res.dkim?.results ?? []).map(
    (x: { status?: { result?: string }; signingDomain?: string }) => `${x.signingDomain}:${x.status?.result}`,
  );
}

export type { TestApi };

/** A live appliance over a fresh SQLite file: the world DNS, the SMTP sink as every SINK_DOMAINS MX, the MTA and the DKIM zone `zone` delegated to the appliance's DNS server. */
export interface LiveWorld {
  db: TestDatabase;
  world: DnsWorld;
  sink: SmtpSink;
  api: TestApi;
  stop(): Promise<void>;
}

export async function startLiveWorld(
  zone: string,
  hostname: string,
  overrides: { outbound?: Record<string, unknown>; [key: string]: unknown } = {},
  roles: RoleSelection = {},
  kind: DatabaseKind = 'sqlite',
  clock?: Clock,
): Promise<LiveWorld> {
  const { outbound, ...rest } = overrides;
  const db = await freshDatabase(kind);
  await db.store.migrateLatest();
  const world = await startDnsWorld();
  const sink = await startSink();
  routeSinkDomains(world);
  const api = await startTestApi(
    db.store,
    {
      ...rest,
      outbound: { hostname, mx_port: sink.port, ...outbound },
      dns: { resolvers: [world.address], zone, server: { enabled: true, host: '127.0.0.1', port: 0 } },
    },
    { roles: { mta: true, dns: true, ...roles }, ...(clock ? { clock } : {}) },
  );
  world.delegate(zone, '127.0.0.1', api.running.dnsPort!);
  return {
    db,
    world,
    sink,
    api,
    async stop() {
      await api.stop();
      await sink.stop();
      await world.stop();
      await db.drop();
    },
  };
}
