import { apiError, notFound } from '../../../lib/errors.js';
import type { Clock } from '../../../lib/time.js';
import { lockRows, type Db } from '../../../store/db.js';
import type { Store } from '../../../store/store.js';
import { findProject } from '../../account/projects/projects.repo.js';
import { addUsage, usageCounts } from '../../account/projects/usage.repo.js';
import { verifyPeriod } from '../../account/projects/periods.js';
import { createResolver } from '../../../dns/resolver.js';
import { loadAddressLists, type AddressLists } from './lists.js';
import { MailServerLookup, type MailServers } from './mail-servers.js';
import { readMailbox } from './syntax.js';
import { KNOWN_TYPOS, suggestDomain } from './typo.js';

export type VerificationResult = 'valid' | 'invalid' | 'risky' | 'unknown';

/** What the checks found about one address (interface §2.6 presents it: verify.presenter.ts). */
export interface Verification {
  email: string;
  result: VerificationResult;
  /** why it is not `valid`, in the order the checks ran */
  reasons: string[];
  /** the address with its domain's typo corrected, or null */
  suggestion: string | null;
  freeProvider: boolean;
  roleAccount: boolean;
  disposable: boolean;
  /** the domain's MX hosts (or the domain itself for an implicit MX); empty when none was found */
  mailServers: string[];
}

export interface VerifyDeps {
  store: Store;
  clock: Clock;
  servers: MailServerLookup;
  lists: AddressLists;
}

export interface VerifiedBatch {
  results: Verification[];
  used: number;
  limit: number;
}

/** The checks alone, charged to nobody (the operator's `posthorn verify`). */
async function check(deps: VerifyDeps, emails: string[]): Promise<Verification[]> {
  const mailboxes = emails.map((e) => ({ email: e, box: readMailbox(e) }));
  const domains = [...new Set(mailboxes.flatMap((m) => (m.box.ok ? [m.box.domain] : [])))];
  const answers = new Map(await Promise.all(domains.map(async (d) => [d, await deps.servers.lookup(d)] as const)));
  return mailboxes.map(({ email, box }) =>
    box.ok ? judge(deps.lists, email, box.local, box.domain, answers.get(box.domain)!) : invalidSyntax(email),
  );
}

function judge(lists: AddressLists, email: string, local: string, domain: string, servers: MailServers): Verification {
  const disposable = lists.isDisposable(domain);
  const role = lists.isRole(local);
  const reasons: string[] = [];
  if (servers.kind === 'none') reasons.push('no_mail_server');
  if (disposable) reasons.push('disposable');
  if (role) reasons.push('role_account');
  if (servers.kind === 'unanswered') reasons.push(servers.why === 'timeout' ? 'dns_timeout' : 'dns_error');
  // a domain DNS says takes no mail may be a typo; one it did not answer about is not known to be
  const typo = servers.kind === 'none' || KNOWN_TYPOS.has(domain) ? suggestDomain(domain) : null;
  // what is known outranks what is not: the lists answer even when DNS does not
  const result =
    servers.kind === 'none'
      ? 'invalid'
      : disposable || role
        ? 'risky'
        : servers.kind === 'unanswered'
          ? 'unknown'
          : 'valid';
  return {
    email,
    result,
    reasons,
    suggestion: typo ? `${local}@${typo}` : null,
    freeProvider: lists.isFreeProvider(domain),
    roleAccount: role,
    disposable,
    mailServers: servers.kind === 'found' ? servers.hosts : [],
  };
}

/** Refuses (429 quota_exhausted) n verifications the rest of this month cannot cover; takes nothing. */
async function covered(deps: VerifyDeps, projectId: string, n: number): Promise<void> {
  await month(deps, deps.store.reader, projectId, n);
}

/** Takes n verifications of this month, or refuses them all (429 quota_exhausted). */
function consume(deps: VerifyDeps, projectId: string, n: number): Promise<{ used: number; limit: number }> {
  return deps.store.tx(async (trx) => {
    await lockRows(trx, 'projects', [projectId]);
    const { before, limit, period } = await month(deps, trx, projectId, n);
    await addUsage(trx, projectId, period, n);
    return { used: before + n, limit };
  });
}

async function month(
  deps: VerifyDeps,
  db: Db,
  projectId: string,
  n: number,
): Promise<{ before: number; limit: number; period: string }> {
  const period = verifyPeriod(deps.clock.now());
  const project = await findProject(db, projectId);
  if (!project) throw notFound(`project ${projectId}`);
  const limit = project.limits.verifications;
  const before = (await usageCounts(db, [projectId], [period])).get(`${projectId}|${period}`) ?? 0;
  if (limit > 0 && before + n > limit) {
    throw apiError(
      'quota_exhausted',
      `this request needs ${n} verifications and ${Math.max(0, limit - before)} of this month's ${limit} are left`,
    );
  }
  return { before, limit, period };
}

/**
 * interface §4.4: each address costs one verification of the project's
 * month (limits.verifications, 0 = unlimited); a batch the remainder cannot
 * cover is refused whole and costs nothing. The checks are syntax, DNS (one
 * lookup per distinct domain, concurrently), the disposable, role and
 * free-provider lists, and typo suggestions; no SMTP probing.
 */
export function verifyService(deps: VerifyDeps) {
  return {
    async verify(projectId: string, emails: string[]): Promise<VerifiedBatch> {
      // a request the month cannot cover is refused before any lookup; it is charged only once
      // answered, so one that fails on the way costs nothing (two at once: the charge decides)
      await covered(deps, projectId, emails.length);
      const results = await check(deps, emails);
      return { results, ...(await consume(deps, projectId, emails.length)) };
    },
    check: (emails: string[]) => check(deps, emails),
    covered: (projectId: string, n: number) => covered(deps, projectId, n),
    consume: (projectId: string, n: number) => consume(deps, projectId, n),
  };
}

export type VerifyService = ReturnType<typeof verifyService>;

export interface VerifyOptions {
  /** dns.resolvers (empty: the system's) */
  resolvers: string[];
  /** verify.dns_timeout_ms: one try per lookup (MX, then A and AAAA together when there is no MX: at most twice this per domain) */
  dnsTimeoutMs: number;
  cacheTtlMs: number;
  disposableFile: string | null;
}

/** The service as the API thread and the CLI build it, from the verify.* settings. */
export function buildVerifyService(o: VerifyOptions, store: Store, clock: Clock): VerifyService {
  const resolver = createResolver({ servers: o.resolvers, timeoutMs: o.dnsTimeoutMs, tries: 1 });
  const servers = new MailServerLookup(resolver, () => clock.now(), o.cacheTtlMs);
  return verifyService({ store, clock, servers, lists: loadAddressLists({ disposableFile: o.disposableFile }) });
}

function invalidSyntax(email: unknown): Verification {
  return {
    email: String(email),
    result: 'invalid',
    reasons: ['invalid_syntax'],
    suggestion: null,
    freeProvider: false,
    roleAccount: false,
    disposable: false,
    mailServers: [],
  };
}
