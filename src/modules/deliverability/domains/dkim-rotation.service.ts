import { apiError, notFound } from '../../../lib/errors.js';
import { lockRows } from '../../../store/db.js';
import { dkimPublicKeyOf } from '../../../dns/checks.js';
import { isNoRecord } from '../../../dns/resolver.js';
import { generateDomainKey } from './dkim-keys.js';
import { dueSteps, rotationTarget, servedByCname, switchedKeys } from './dkim-rotation.js';
import * as repo from './domains.repo.js';
import type { Domain } from './domains.repo.js';
import { deleteKeys, domainKeys, putKey, setKeyState, type DomainKey } from './domain-keys.repo.js';
import type { DomainDeps } from './domain-settings.js';

/**
 * The steps of a key rotation (dkim-rotation.ts) against the store and DNS:
 * start (a new key published on a free selector), switch (signing moves to
 * it once the zone has served it longer than its TTL and dns.resolvers see
 * it), retire (the old key's record removed after dkim.retire_after).
 * Each step re-reads the keys under the domain's row lock, so the job, the
 * CLI and several processes never make two rotations of one domain.
 */
export async function startRotation(deps: Pick<DomainDeps, 'store' | 'clock' | 'domains'>, d: Domain): Promise<Domain> {
  const s = deps.domains.dkim;
  const refusal = (keys: DomainKey[]) => {
    const target = rotationTarget(keys, s);
    if ('refused' in target) throw apiError('conflict', `${d.name}: ${target.refused}`);
    if (!servedByCname(d.checks, target.selector, d.dkimToken, deps.domains.zone)) {
      throw apiError(
        'conflict',
        `${d.name}: the last check did not find ${target.selector}._domainkey.${d.name} as the CNAME to ${target.selector}.${d.dkimToken}.${deps.domains.zone}; a key published as a TXT record cannot change without a DNS edit (docs/dns.md)`,
      );
    }
    return target.selector;
  };
  // Key generation is CPU work: done before the transaction, for the selector free now.
  const selector = refusal(await domainKeys(deps.store.knex, d.id));
  const key = await generateDomainKey(selector, 'pending', deps.clock.now());
  return deps.store.tx(async (trx) => {
    await lockRows(trx, 'domains', [d.id]);
    const current = await repo.findDomainById(trx, d.id);
    if (!current) throw notFound(`domain ${d.id}`);
    if (refusal(await domainKeys(trx, d.id)) !== selector)
      throw apiError('conflict', `${d.name}: its keys changed meanwhile; try again`);
    // published from the moment it is stored: the zone answers from the store
    await putKey(trx, d.id, { ...key, publishedAt: deps.clock.now() });
    return current;
  });
}

/** Whether public DNS, through dns.resolvers, shows this key at <selector>._domainkey.<domain>. */
async function dnsShows(
  deps: Pick<DomainDeps, 'resolver'>,
  d: Domain,
  selector: string,
  publicKey: string,
): Promise<boolean> {
  try {
    const txt = await deps.resolver.resolveTxt(`${selector}._domainkey.${d.name}`);
    return txt.some((parts) => dkimPublicKeyOf(parts.join('')) === publicKey);
  } catch (e) {
    if (isNoRecord(e)) return false;
    throw e;
  }
}

export interface RotationSummary {
  started: number;
  switched: number;
  retired: number;
  /** pending keys served longer than their TTL that DNS does not show yet */
  waiting: number;
}

/** One domain's due steps; what it did is added to `sum`. */
async function advanceDomain(deps: DomainDeps, d: Domain, sum: RotationSummary): Promise<void> {
  const s = deps.domains.dkim;
  const keys = await domainKeys(deps.store.knex, d.id);
  const due = dueSteps(d, keys, deps.clock.now(), s);
  if (due.retire.length) {
    await deps.store.tx(async (trx) => {
      await lockRows(trx, 'domains', [d.id]);
      const still = dueSteps(d, await domainKeys(trx, d.id), deps.clock.now(), s).retire;
      await deleteKeys(trx, d.id, still);
      sum.retired += still.length;
    });
  }
  if (due.switchTo) {
    const pending = keys.find((k) => k.selector === due.switchTo)!;
    if (await dnsShows(deps, d, pending.selector, pending.publicKey))
      sum.switched += await switchTo(deps, d.id, pending);
    else sum.waiting++;
  }
  const target = rotationTarget(keys, s);
  // a domain whose keys are TXT records is never rotated by the job (startRotation says why when asked by hand)
  if (due.start && 'selector' in target && servedByCname(d.checks, target.selector, d.dkimToken, deps.domains.zone)) {
    await startRotation(deps, d);
    sum.started++;
  }
}

/** Signing moves to `pending` if it is still the domain's pending key; 1 when it did. */
async function switchTo(deps: DomainDeps, domainId: string, pending: DomainKey): Promise<number> {
  return deps.store.tx(async (trx) => {
    await lockRows(trx, 'domains', [domainId]);
    const d = await repo.findDomainById(trx, domainId);
    const keys = await domainKeys(trx, domainId);
    const now = deps.clock.now();
    if (
      !d ||
      !keys.some((k) => k.selector === pending.selector && k.state === 'pending' && k.publicKey === pending.publicKey)
    )
      return 0;
    for (const k of switchedKeys(keys, pending.selector, now, deps.domains.dkim)) await setKeyState(trx, domainId, k);
    await repo.setActiveKey(trx, domainId, pending.selector, now);
    return 1;
  });
}

/** The dkim_rotation job: every domain with a step due. A domain that fails is reported and the others go on. */
export async function advanceRotations(
  deps: DomainDeps,
  onError: (d: Domain, e: unknown) => void,
): Promise<RotationSummary> {
  const s = deps.domains.dkim;
  const sum: RotationSummary = { started: 0, switched: 0, retired: 0, waiting: 0 };
  const domains = await repo.domainsToRotate(
    deps.store.knex,
    s.rotateAfterMs > 0 ? deps.clock.now() - s.rotateAfterMs : null,
  );
  for (const d of domains) {
    try {
      await advanceDomain(deps, d, sum);
    } catch (e) {
      onError(d, e);
    }
  }
  return sum;
}

export function describeRotation(sum: RotationSummary): string {
  return `${sum.started} rotation(s) started, ${sum.switched} switched, ${sum.retired} old key(s) removed, ${sum.waiting} waiting for DNS`;
}
