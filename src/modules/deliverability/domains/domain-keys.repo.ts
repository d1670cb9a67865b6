import type { Db } from '../../../store/db.js';
import type { KeySlot, KeyState } from './dkim-rotation.js';

/** A domain's DKIM key pairs, one row per selector (the domain_keys table); rotation moves them through their states. */
export interface DomainKey extends KeySlot {
  privateKeyPem: string;
}

function keyRow(domainId: string, k: DomainKey) {
  return {
    domain_id: domainId,
    selector: k.selector,
    private_key: k.privateKeyPem,
    public_key: k.publicKey,
    created_at: k.publishedAt,
    published_at: k.publishedAt,
    state: k.state,
    retire_at: k.retireAt,
  };
}

/** A new domain's keys, inserted with it. */
export async function insertKeys(db: Db, domainId: string, keys: DomainKey[]): Promise<void> {
  await db('domain_keys').insert(keys.map((k) => keyRow(domainId, k)));
}

export async function domainKeys(db: Db, domainId: string): Promise<DomainKey[]> {
  const rows = (await db('domain_keys')
    .select('selector', 'private_key', 'public_key', 'state', 'published_at', 'created_at', 'retire_at')
    .where({ domain_id: domainId })
    .orderBy('selector')) as Array<{
    selector: string;
    private_key: string;
    public_key: string;
    state: string;
    published_at: number | null;
    created_at: number;
    retire_at: number | null;
  }>;
  return rows.map((r) => ({
    selector: r.selector,
    privateKeyPem: r.private_key,
    publicKey: r.public_key,
    state: r.state as KeyState,
    publishedAt: Number(r.published_at ?? r.created_at),
    retireAt: r.retire_at == null ? null : Number(r.retire_at),
  }));
}

/** A selector's key replaced by a new one (rotation: the selector was free or held a standby key). */
export async function putKey(db: Db, domainId: string, k: DomainKey): Promise<void> {
  await db('domain_keys').where({ domain_id: domainId, selector: k.selector }).delete();
  await db('domain_keys').insert(keyRow(domainId, k));
}

export async function setKeyState(
  db: Db,
  domainId: string,
  k: Pick<KeySlot, 'selector' | 'state' | 'retireAt'>,
): Promise<void> {
  await db('domain_keys')
    .where({ domain_id: domainId, selector: k.selector })
    .update({ state: k.state, retire_at: k.retireAt });
}

/** Retired keys' rows go, and with them their records in the zone. */
export async function deleteKeys(db: Db, domainId: string, selectors: string[]): Promise<void> {
  if (selectors.length) await db('domain_keys').where({ domain_id: domainId }).whereIn('selector', selectors).delete();
}

/**
 * What the authoritative DKIM zone serves: the public key behind
 * <selector>.<token>.<zone>; with selector null, any key of the token (the
 * zone asks whether <token>.<zone> has names below it).
 */
export async function publicKeyFor(db: Db, token: string, selector: string | null): Promise<string | null> {
  const q = db('domain_keys as k')
    .join('domains as d', 'd.id', 'k.domain_id')
    .select('k.public_key')
    .where({ 'd.dkim_token': token });
  if (selector !== null) q.andWhere({ 'k.selector': selector });
  const row = (await q.first()) as { public_key: string } | undefined;
  return row?.public_key ?? null;
}
