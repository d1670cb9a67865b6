import { iso } from '../../../lib/time.js';
import type { ApiKey } from './keys.repo.js';

/** Never carries the secret: only creation shows it, through presentNewKey. */
export function presentKey(k: ApiKey) {
  return {
    id: k.id,
    object: 'api_key' as const,
    name: k.name,
    mode: k.mode,
    scopes: k.scopes,
    project_id: k.projectId,
    prefix: k.prefix,
    // the one domain it may send from (docs/projects-and-keys.md), or null
    domain_id: k.domainId,
    created_at: iso(k.createdAt),
    last_used_at: iso(k.lastUsedAt),
    revoked_at: iso(k.revokedAt),
  };
}

export function presentNewKey(k: ApiKey, secret: string) {
  const { id, object, ...rest } = presentKey(k);
  return { id, object, key: secret, ...rest };
}
