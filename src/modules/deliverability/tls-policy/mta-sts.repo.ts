import type { Db } from '../../../store/db.js';

// Cached MTA-STS policies (RFC 8461 §3.3), one per recipient domain (migration 0032): the policy
// file as fetched, the TXT id it was fetched under, and until when it holds. The MTA reads a row
// when its memory has none and writes one after each successful fetch.

export interface StoredStsPolicy {
  domain: string;
  txtId: string;
  /** the policy file as fetched; parsed again when read */
  policyText: string;
  fetchedAt: number;
  expiresAt: number;
}

interface Row {
  domain: string;
  txt_id: string;
  policy_text: string;
  fetched_at: number | string;
  expires_at: number | string;
}

export async function findStsPolicy(db: Db, domain: string): Promise<StoredStsPolicy | null> {
  const row = (await db('mta_sts_policies')
    .select('domain', 'txt_id', 'policy_text', 'fetched_at', 'expires_at')
    .where({ domain })
    .first()) as Row | undefined;
  return row
    ? {
        domain: row.domain,
        txtId: row.txt_id,
        policyText: row.policy_text,
        fetchedAt: Number(row.fetched_at),
        expiresAt: Number(row.expires_at),
      }
    : null;
}

/** The policy just fetched replaces the domain's cached one (§5.1: a new TXT id means a new policy). */
export async function saveStsPolicy(db: Db, p: StoredStsPolicy): Promise<void> {
  await db('mta_sts_policies')
    .insert({
      domain: p.domain,
      txt_id: p.txtId,
      policy_text: p.policyText,
      fetched_at: p.fetchedAt,
      expires_at: p.expiresAt,
    })
    .onConflict('domain')
    .merge(['txt_id', 'policy_text', 'fetched_at', 'expires_at']);
}
