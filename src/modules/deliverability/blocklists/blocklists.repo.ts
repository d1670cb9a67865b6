import type { Knex } from 'knex';
import { dialectOf, type Db } from '../../../store/db.js';
import type { BlocklistKind, ListingState } from './dnsbl.js';

/** What one list said of one target at its last check (migration 0020). */
export interface StoredCheck {
  target: string;
  zone: string;
  kind: BlocklistKind;
  state: ListingState;
  /** the last listed-or-clear answer: a list's error never overwrites it */
  knownState: 'listed' | 'clear' | null;
  codes: string[];
  reason: string | null;
  /** when `state` began */
  since: number;
  checkedAt: number;
}

interface Row {
  target: string;
  zone: string;
  kind: string;
  state: string;
  known_state: string | null;
  codes: string;
  reason: string | null;
  since: number | string;
  checked_at: number | string;
}

const fromRow = (r: Row): StoredCheck => ({
  target: r.target,
  zone: r.zone,
  kind: r.kind as BlocklistKind,
  state: r.state as ListingState,
  knownState: r.known_state as StoredCheck['knownState'],
  codes: JSON.parse(r.codes) as string[],
  reason: r.reason,
  since: Number(r.since),
  checkedAt: Number(r.checked_at),
});

/**
 * One check run's read-compare-write at a time across the processes of a
 * PostgreSQL cluster (each runs the job): the second reads what the first
 * wrote, and announces no change twice. SQLite has one writer already.
 */
export async function lockChecks(trx: Knex.Transaction): Promise<void> {
  if (dialectOf(trx) === 'pg') await trx.raw('lock table blocklist_checks in exclusive mode');
}

export async function allChecks(db: Db): Promise<StoredCheck[]> {
  return ((await db('blocklist_checks').select('*').orderBy(['kind', 'target', 'zone'])) as Row[]).map(fromRow);
}

/** The checks a project sees: the appliance's IPs (every project sends from them) and its own domains. */
export async function checksOfProject(db: Db, projectId: string): Promise<StoredCheck[]> {
  const rows = (await db('blocklist_checks')
    .select('*')
    .where('kind', 'ip')
    .orWhereIn('target', db('domains').select('name').where('project_id', projectId))
    .orderBy(['kind', 'target', 'zone'])) as Row[];
  return rows.map(fromRow);
}

export async function saveChecks(db: Db, checks: StoredCheck[]): Promise<void> {
  for (const c of checks) {
    const row = {
      kind: c.kind,
      state: c.state,
      known_state: c.knownState,
      codes: JSON.stringify(c.codes),
      reason: c.reason,
      since: c.since,
      checked_at: c.checkedAt,
    };
    await db('blocklist_checks')
      .insert({ target: c.target, zone: c.zone, ...row })
      .onConflict(['target', 'zone'])
      .merge(row);
  }
}

/**
 * Targets gone (a domain deleted, an IP no longer the appliance's) lose their
 * rows. A domain that is only unverified for a while keeps them, so that a
 * listing that goes on is not announced again when it is verified again.
 */
export async function dropChecksExcept(db: Db, ips: string[]): Promise<void> {
  await db('blocklist_checks')
    .where((w) => {
      w.where('kind', 'ip').whereNotIn('target', ips.length ? ips : ['']);
    })
    .orWhere((w) => {
      w.where('kind', 'domain').whereNotIn('target', db('domains').select('name'));
    })
    .delete();
}

/** The project of each verified domain, by name; and the projects that send from the appliance's IPs. */
export async function verifiedDomainProjects(db: Db): Promise<Map<string, string>> {
  const rows = (await db('domains').select('name', 'project_id').where('status', 'verified')) as Array<{
    name: string;
    project_id: string;
  }>;
  return new Map(rows.map((r) => [r.name, r.project_id]));
}

/** The listings that concern a domain's mail: its own, and the appliance's IPs' (a list's error keeps a listing). */
export async function listingsOf(db: Db, domain: string): Promise<StoredCheck[]> {
  const rows = (await db('blocklist_checks')
    .select('*')
    .where('known_state', 'listed')
    .andWhere((w) => {
      w.where('kind', 'ip').orWhere('target', domain);
    })
    .orderBy(['kind', 'target', 'zone'])) as Row[];
  return rows.map(fromRow);
}
