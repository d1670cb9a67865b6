import ipaddr from 'ipaddr.js';
import { newId } from '../../../lib/ids.js';
import type { Clock } from '../../../lib/time.js';
import { isNoRecord, type DnsResolver } from '../../../dns/resolver.js';
import type { Store } from '../../../store/store.js';
import { insertEvents, type OutboxEvent } from '../../notifying/events/events.repo.js';
import { BlocklistChecker, type BlocklistResult } from './blocklist-checker.js';
import { createDnsblLookup } from '../../../dns/dnsbl-lookup.js';
import {
  changes,
  DEFAULT_BLOCKLISTS,
  targetKind,
  validateBlocklists,
  type Blocklist,
  type ListingPair,
} from './dnsbl.js';
import {
  allChecks,
  checksOfProject,
  dropChecksExcept,
  lockChecks,
  saveChecks,
  verifiedDomainProjects,
  type StoredCheck,
} from './blocklists.repo.js';

export interface BlocklistSettings {
  lists: readonly Blocklist[];
  /** blocklists.ips; empty: the public addresses outbound.hostname resolves to */
  ips: readonly string[];
  /** outbound.hostname */
  hostname: string;
}

export interface BlocklistDeps {
  store: Store;
  clock: Clock;
  resolver: DnsResolver;
  blocklists: BlocklistSettings;
}

/** The config's lists (null: the built-in ones) and IPs, checked: a bad entry stops the start, naming it. */
export function blocklistSettings(config: {
  blocklists: { lists: unknown[] | null; ips: string[] };
  outbound: { hostname: string };
}): BlocklistSettings {
  const lists = validateBlocklists(config.blocklists.lists ?? DEFAULT_BLOCKLISTS, 'blocklists.lists');
  if (!lists.ok) throw new Error(`config key ${lists.message}`);
  config.blocklists.ips.forEach((ip, i) => {
    if (targetKind(ip) !== 'ip') throw new Error(`config key "blocklists.ips[${i}]" is not an IP address: "${ip}"`);
  });
  return { lists: lists.lists, ips: config.blocklists.ips, hostname: config.outbound.hostname };
}

/** The checker the job keeps for the life of the process, asking through dns.resolvers. */
export function blocklistChecker(servers: readonly string[], clock: Clock, perSecond: number): BlocklistChecker {
  return new BlocklistChecker({ lookup: createDnsblLookup({ servers }), clock, perSecond });
}

/** What a check run did, for the job's log line. */
export interface BlocklistRun {
  targets: number;
  listed: number;
  errors: number;
  newlyListed: number;
  delisted: number;
}

/**
 * The blocklist_check job: asks every list about every outbound IP and
 * verified sending domain (through the checker: paced, cached by TTL),
 * stores the answers, and emits domain.blocklisted / domain.delisted for
 * each change, in one transaction with them. A list's error changes nothing.
 */
export async function checkBlocklists(deps: BlocklistDeps, checker: BlocklistChecker): Promise<BlocklistRun> {
  const ips = await outboundIps(deps);
  const domains = await verifiedDomainProjects(deps.store.knex);
  const results = deps.blocklists.lists.length
    ? await checker.check([...ips, ...domains.keys()], deps.blocklists.lists)
    : [];
  const run: BlocklistRun = { targets: ips.length + domains.size, listed: 0, errors: 0, newlyListed: 0, delisted: 0 };
  await deps.store.tx(async (trx) => {
    await lockChecks(trx);
    const now = deps.clock.now();
    const before = new Map((await allChecks(trx)).map((c) => [`${c.target} ${c.zone}`, c]));
    const next = results.map((r) => stored(r, before.get(`${r.target} ${r.zone}`), now));
    const known = [...before.values()]
      .filter((c) => c.knownState !== null)
      .map((c) => ({ target: c.target, zone: c.zone, state: c.knownState! }));
    const { listed, cleared } = changes(known, next);
    const events = [
      ...listed.map((p) => event('domain.blocklisted', p)),
      ...cleared.map((p) => event('domain.delisted', p)),
    ].flatMap((e) => e(domains, now, next, deps.blocklists.lists));
    await saveChecks(trx, next);
    await dropChecksExcept(trx, ips);
    await insertEvents(trx, events);
    Object.assign(run, {
      listed: next.filter((c) => c.knownState === 'listed').length,
      errors: next.filter((c) => c.state === 'error').length,
      newlyListed: listed.length,
      delisted: cleared.length,
    });
  });
  return run;
}

function stored(r: BlocklistResult, prev: StoredCheck | undefined, now: number): StoredCheck {
  return {
    target: r.target,
    zone: r.zone,
    kind: r.kind,
    state: r.state,
    knownState: r.state === 'error' ? (prev?.knownState ?? null) : r.state,
    codes: r.codes,
    reason: r.reason ?? null,
    since: prev && prev.state === r.state ? prev.since : now,
    checkedAt: r.checkedAt,
  };
}

/**
 * One event per project concerned: a domain's listing goes to its project;
 * an IP's to every project with a verified domain, since they all send from it.
 */
function event(type: 'domain.blocklisted' | 'domain.delisted', pair: ListingPair) {
  return (
    domains: Map<string, string>,
    now: number,
    checks: StoredCheck[],
    lists: readonly Blocklist[],
  ): OutboxEvent[] => {
    const check = checks.find((c) => c.target === pair.target && c.zone === pair.zone)!;
    const projects =
      check.kind === 'ip'
        ? [...new Set(domains.values())]
        : [domains.get(check.target)].filter((p): p is string => p !== undefined);
    const data = {
      target: check.target,
      kind: check.kind,
      list: check.zone,
      list_name: lists.find((l) => l.zone === check.zone)?.name ?? check.zone,
      codes: check.codes,
      reason: check.reason,
    };
    return projects.map((projectId) => ({
      id: newId('event', now),
      projectId,
      type,
      emailId: null,
      recipient: null,
      simulated: false,
      data,
      createdAt: now,
    }));
  };
}

/** The configured IPs, else the public addresses outbound.hostname has (a private or loopback one is on no public list). */
export async function outboundIps(deps: Pick<BlocklistDeps, 'resolver' | 'blocklists'>): Promise<string[]> {
  if (deps.blocklists.ips.length) return [...deps.blocklists.ips];
  const ask = (p: Promise<string[]>) =>
    p.catch((e: unknown) => {
      if (isNoRecord(e)) return [];
      throw e;
    });
  const found = [
    ...(await ask(deps.resolver.resolve4(deps.blocklists.hostname))),
    ...(await ask(deps.resolver.resolve6(deps.blocklists.hostname))),
  ];
  return found.filter((ip) => ipaddr.isValid(ip) && ipaddr.process(ip).range() === 'unicast');
}

/** One list's last answer about one target, with the list's name from the config. */
export interface ListedCheck extends StoredCheck {
  /** the list's name (blocklists.lists), else its zone */
  listName: string;
}

/** GET /v1/blocklists: the appliance's IPs and the project's domains, each list's last answer. */
export async function projectBlocklists(
  deps: Pick<BlocklistDeps, 'store' | 'blocklists'>,
  projectId: string,
): Promise<ListedCheck[]> {
  const checks = await checksOfProject(deps.store.reader, projectId);
  return checks.map((c) => ({
    ...c,
    listName: deps.blocklists.lists.find((l) => l.zone === c.zone)?.name ?? c.zone,
  }));
}

export function blocklistService(deps: BlocklistDeps) {
  return { list: (projectId: string) => projectBlocklists(deps, projectId) };
}

export type BlocklistService = ReturnType<typeof blocklistService>;

export function describeBlocklistRun(r: BlocklistRun): string {
  return `${r.targets} target(s): ${r.listed} listing(s), ${r.errors} list error(s), ${r.newlyListed} new listing(s), ${r.delisted} delisted`;
}
