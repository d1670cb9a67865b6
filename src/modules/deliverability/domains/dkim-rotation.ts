import { iso } from '../../../lib/time.js';
import { DKIM_SELECTORS } from './records.js';

/**
 * DKIM key rotation without DNS edits (docs/domains.md "Key rotation").
 * The customer's three CNAMEs point each selector into the appliance's
 * zone, so a key can change behind a selector the domain does not sign
 * with: publish a new key there, sign with it once every resolver that
 * could have cached the old answer has had time to forget it, and keep the
 * old key published a while for the mail already signed with it.
 */
export type KeyState = 'active' | 'standby' | 'pending' | 'retiring';

/** One selector's key as rotation sees it (no private part). */
export interface KeySlot {
  selector: string;
  state: KeyState;
  publishedAt: number;
  retireAt: number | null;
  publicKey: string;
}

export interface RotationSettings {
  /** dkim.rotate_after: a verified domain's key is replaced this long after it began signing; 0 = never by itself */
  rotateAfterMs: number;
  /** dkim.retire_after: how long a replaced key stays published */
  retireAfterMs: number;
  /** dkim.key_ttl: the TTL of the zone's DKIM records; a new key signs only after being served longer */
  keyTtlMs: number;
}

export interface RotatingDomain {
  status: string;
  activeSelector: string;
  /** when signing moved to the active key */
  dkimActivatedAt: number;
}

/** The selector a new key goes to, or why none can take one now. */
export function rotationTarget(
  keys: readonly KeySlot[],
  s: RotationSettings,
): { selector: string } | { refused: string } {
  const pending = keys.find((k) => k.state === 'pending');
  if (pending)
    return {
      refused: `a rotation is already under way: selector ${pending.selector} was published at ${iso(pending.publishedAt)} and signs from ${iso(pending.publishedAt + s.keyTtlMs)} once DNS shows it`,
    };
  const inUse = new Set(keys.filter((k) => k.state === 'active' || k.state === 'retiring').map((k) => k.selector));
  const free = DKIM_SELECTORS.filter((sel) => !inUse.has(sel));
  // a selector with no key left is taken before one holding a standby key nobody signed with
  const empty = free.find((sel) => !keys.some((k) => k.selector === sel));
  const selector = empty ?? free[0];
  if (selector) return { selector };
  const until = Math.min(...keys.filter((k) => k.state === 'retiring').map((k) => k.retireAt ?? Infinity));
  return { refused: `every selector holds a key in use; the oldest retiring key is removed at ${iso(until)}` };
}

/** What a domain's keys are due for at `now`: remove retired keys, switch to a pending key (once DNS shows it), start a rotation. */
export interface DueSteps {
  retire: string[];
  /** the pending key's selector, served longer than its TTL: the caller confirms through DNS before switching */
  switchTo: string | null;
  start: boolean;
}

export function dueSteps(d: RotatingDomain, keys: readonly KeySlot[], now: number, s: RotationSettings): DueSteps {
  const retire = keys
    .filter((k) => k.state === 'retiring' && k.retireAt !== null && k.retireAt <= now)
    .map((k) => k.selector);
  const pending = keys.find((k) => k.state === 'pending');
  const switchTo = pending && pending.publishedAt + s.keyTtlMs < now ? pending.selector : null;
  const next = nextRotationAt(d, s);
  // Only a verified domain rotates by itself: one whose CNAMEs are missing could never switch.
  const start = !pending && d.status === 'verified' && next !== null && next <= now;
  return { retire, switchTo, start };
}

export function nextRotationAt(
  d: Pick<RotatingDomain, 'dkimActivatedAt'>,
  s: Pick<RotationSettings, 'rotateAfterMs'>,
): number | null {
  return s.rotateAfterMs > 0 ? d.dkimActivatedAt + s.rotateAfterMs : null;
}

/** The keys after signing moves to `selector`: it becomes active, the active one retires after retire_after. */
export function switchedKeys(keys: readonly KeySlot[], selector: string, now: number, s: RotationSettings): KeySlot[] {
  return keys.map((k) => {
    if (k.selector === selector) return { ...k, state: 'active', retireAt: null };
    if (k.state === 'active') return { ...k, state: 'retiring', retireAt: now + s.retireAfterMs };
    return k;
  });
}

/**
 * Whether the last check found the selector's record as the CNAME into the
 * appliance's zone. A domain that published its keys as TXT records instead
 * (checks.ts allows it) cannot have a key changed without a DNS edit: a new
 * key there would only make its record a mismatch and stop its live mail.
 */
export function servedByCname(
  checks: Record<string, { dns: string; seen: string[] }>,
  selector: string,
  token: string,
  zone: string,
): boolean {
  const c = checks[`dkim:${selector}`];
  const target = `${selector}.${token}.${zone}`.toLowerCase();
  return c?.dns === 'found' && c.seen.some((v) => v.toLowerCase().replace(/\.$/, '') === target);
}
