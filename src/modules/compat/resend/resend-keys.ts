import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../../../lib/schema.js';
import { iso } from '../../../lib/time.js';
import type { ApiKey } from '../../account/keys/keys.repo.js';
import type { CreateKeyInput } from '../../account/keys/keys.service.js';
import { SCOPES, type Scope } from '../../account/keys/scopes.js';

// API keys as Resend makes and shows them (docs/resend.md): a `permission` instead of scopes, the
// secret in `token`, `domain_id` for a sending key that may send from one domain only. Pure.

export const RESEND_PERMISSIONS = ['full_access', 'sending_access'] as const;
export type ResendPermission = (typeof RESEND_PERMISSIONS)[number];

/** `full_access`: every scope; `sending_access`: sending only, as Resend's "can only send emails". */
export const PERMISSION_SCOPES: Record<ResendPermission, readonly Scope[]> = {
  full_access: SCOPES,
  sending_access: ['emails:send'],
};

/** POST /api-keys: Resend's body, unknown fields ignored as Resend ignores them. */
export const ResendCreateKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    permission: Type.Optional(StringEnum(RESEND_PERMISSIONS)),
    domain_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  },
  { additionalProperties: true },
);
export type ResendCreateKeyBody = Static<typeof ResendCreateKeyBody>;

/** PATCH /api-keys/{id}: a new name. */
export const ResendUpdateKeyBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: true },
);

/**
 * What our key service is asked for. As Resend documents it, `domain_id` restricts a
 * `sending_access` key and is not used for a `full_access` one, which may send from any domain.
 */
export function fromResendKey(b: ResendCreateKeyBody): Pick<CreateKeyInput, 'name' | 'scopes' | 'domainId'> {
  const permission = b.permission ?? 'full_access';
  return {
    name: b.name,
    scopes: PERMISSION_SCOPES[permission],
    // sending_access without one: the creating key's domain, if it has one (as on /v1)
    domainId: permission === 'full_access' ? null : b.domain_id,
  };
}

/** A key of GET /api-keys. */
export function resendListedKey(k: ApiKey) {
  return { id: k.id, name: k.name, created_at: iso(k.createdAt), last_used_at: iso(k.lastUsedAt) };
}
