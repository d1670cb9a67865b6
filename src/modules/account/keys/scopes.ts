// Scopes of interface §5 plus those CONTRACT §5 adds for the groups the
// interface leaves open. A key created without --scopes holds all of them.
export const SCOPES = [
  'emails:send',
  'emails:read',
  'domains:manage',
  'templates:manage',
  'emails:verify',
  'webhooks:manage',
  'inbound:read',
  'suppressions:manage',
  'keys:manage',
  'usage:read',
  'logs:read',
  'contacts:manage',
  'broadcasts:manage',
] as const;

export type Scope = (typeof SCOPES)[number];

export const KEY_MODES = ['test', 'live'] as const;
export type KeyMode = (typeof KEY_MODES)[number];

export function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s);
}
