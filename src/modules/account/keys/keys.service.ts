import { apiError, notFound, validationError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import type { Clock } from '../../../lib/time.js';
import type { Store } from '../../../store/store.js';
import { findProject } from '../projects/projects.repo.js';
import { generateKeySecret, hashKey, looksLikeKey } from './key-format.js';
import {
  findKey,
  findKeyWithProjectByHash,
  findProjectDomainName,
  findKeyWithProjectById,
  insertKey,
  listKeys as listForProject,
  renameKey as rename,
  revokeKey as revoke,
  touchKeys,
  type ApiKey,
} from './keys.repo.js';
import { isScope, KEY_MODES, SCOPES, type KeyMode, type Scope } from './scopes.js';
import { TtlCache } from '../../../lib/ttl-cache.js';
import type { Principal } from './principal.js';

export interface KeyDeps {
  store: Store;
  clock: Clock;
}

export interface CreateKeyInput {
  projectId: string;
  mode: KeyMode;
  scopes?: readonly string[] | undefined;
  name?: string | null | undefined;
  /** the key asking, when created through the API: it cannot grant more than it holds */
  grantor?: ApiKey | undefined;
  /** the one domain of the project the key may send from (checked at every send); by default the grantor's */
  domainId?: string | null | undefined;
}

export async function createKey(deps: KeyDeps, input: CreateKeyInput): Promise<{ key: ApiKey; secret: string }> {
  if (!(KEY_MODES as readonly string[]).includes(input.mode))
    throw validationError('mode', `must be one of: ${KEY_MODES.join(', ')}`);
  const domainId = input.domainId === undefined ? (input.grantor?.domainId ?? null) : input.domainId;
  const scopes = scopesOf(input, domainId);
  if (input.grantor) checkGrant(input.grantor, input.mode, scopes, domainId);
  const name = input.name == null ? null : checkName(input.name);
  const now = deps.clock.now();
  const secret = generateKeySecret(input.mode);
  const key: ApiKey = {
    id: newId('key', now),
    projectId: input.projectId,
    name,
    mode: input.mode,
    scopes,
    prefix: secret.prefix,
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
    domainId,
    domainName: null,
  };
  await deps.store.tx(async (trx) => {
    if (!(await findProject(trx, input.projectId))) throw notFound(`project ${input.projectId}`);
    if (domainId !== null) {
      key.domainName = await findProjectDomainName(trx, input.projectId, domainId);
      if (key.domainName === null) throw validationError('domain_id', `no domain '${domainId}' in this project`);
    }
    await insertKey(trx, key, secret.hash);
  });
  return { key, secret: secret.key };
}

/**
 * Scopes a key restricted to a domain cannot hold: a broadcast is sent by the appliance long after
 * the request, with no key to check its From against (emails.service.ts checkApproved checks the rest).
 */
const UNCHECKED_SENDING_SCOPES: readonly Scope[] = ['broadcasts:manage'];

/**
 * The new key's scopes: those asked for, else the grantor's (else all); a key restricted to a
 * domain never holds the scopes whose sends no key checks, and is not given them by default.
 */
function scopesOf(input: CreateKeyInput, domainId: string | null): Scope[] {
  const unchecked = (s: string) => domainId !== null && (UNCHECKED_SENDING_SCOPES as readonly string[]).includes(s);
  if (input.scopes === undefined)
    return normalizeScopes((input.grantor?.scopes ?? SCOPES).filter((s) => !unchecked(s)));
  const scopes = normalizeScopes(input.scopes);
  const refused = scopes.find(unchecked);
  if (refused)
    throw validationError(
      'domain_id',
      `a key restricted to a domain cannot hold ${refused}: broadcasts are sent with no key to check their From against`,
    );
  return scopes;
}

/** A key creates keys only within what it holds: its mode, its scopes, and its domain if it has one. */
function checkGrant(grantor: ApiKey, mode: KeyMode, scopes: readonly Scope[], domainId: string | null): void {
  if (mode !== grantor.mode) throw apiError('forbidden', `a ${grantor.mode} key cannot create a ${mode} key`);
  const extra = scopes.filter((s) => !grantor.scopes.includes(s));
  if (extra.length) throw apiError('forbidden', `this key cannot grant scopes it does not hold: ${extra.join(', ')}`);
  if (grantor.domainId !== null && domainId !== grantor.domainId)
    throw apiError(
      'forbidden',
      `this key may send only from ${grantor.domainName ?? grantor.domainId}: it can create only keys restricted to the same domain`,
    );
}

function checkName(given: string): string {
  const name = given.trim();
  if (name.length < 1 || name.length > 200) throw validationError('name', 'must be 1 to 200 characters');
  return name;
}

function normalizeScopes(scopes: readonly string[]): Scope[] {
  const out: Scope[] = [];
  scopes.forEach((s, i) => {
    if (!isScope(s)) throw validationError(`scopes[${i}]`, `unknown scope "${s}" (known: ${SCOPES.join(', ')})`);
    if (!out.includes(s)) out.push(s);
  });
  if (out.length === 0) throw validationError('scopes', 'must name at least one scope');
  return out;
}

export async function listKeys(deps: KeyDeps, projectId: string): Promise<ApiKey[]> {
  if (!(await findProject(deps.store.knex, projectId))) throw notFound(`project ${projectId}`);
  return listForProject(deps.store.knex, projectId);
}

/** A key's new name (null: none); a key of another project is "not found". */
export async function renameKey(deps: KeyDeps, id: string, projectId: string, name: string | null): Promise<ApiKey> {
  const trimmed = name === null ? null : checkName(name);
  return deps.store.tx(async (trx) => {
    const k = await findKey(trx, id);
    if (!k || k.projectId !== projectId) throw notFound(`key ${id}`);
    await rename(trx, id, trimmed);
    return { ...k, name: trimmed };
  });
}

/** Revoke a key; with `projectId`, a key of another project is "not found" (project isolation). */
export async function revokeKey(deps: KeyDeps, id: string, projectId?: string): Promise<ApiKey> {
  return deps.store.tx(async (trx) => {
    const k = await findKey(trx, id);
    if (!k || (projectId !== undefined && k.projectId !== projectId)) throw notFound(`key ${id}`);
    if (k.revokedAt === null) await revoke(trx, id, deps.clock.now());
    return (await findKey(trx, id))!;
  });
}

/**
 * A key and its project are read again at most this long after the last
 * read: under load a key asks the database a few times a second instead of
 * at every request, and a revocation or suspension made by another process
 * (the CLI) counts within this time. Revocations through the API count at once.
 */
export const KEY_CACHE_MS = 200;

/**
 * Resolves bearer keys; last-used times are kept in memory and written in
 * batches, so that a request costs at most one read and no write.
 */
export class KeyAuthenticator {
  private readonly pendingTouches = new Map<string, number>();
  // Unknown and revoked keys are not kept: guessing must not fill memory.
  private readonly cache: TtlCache<Principal | null>;

  constructor(private readonly deps: KeyDeps) {
    this.cache = new TtlCache<Principal | null>(
      KEY_CACHE_MS,
      (p) => p !== null,
      () => deps.clock.now(),
    );
  }

  /** null for a missing, malformed, unknown or revoked key */
  async authenticate(bearer: string | undefined): Promise<Principal | null> {
    if (!bearer || !looksLikeKey(bearer)) return null;
    // Kept by the key itself, which every request carries through this process's memory anyway:
    // a hit costs no SHA-256 (about a fortieth of an accepted email's time on the API thread).
    const principal = await this.cache.get(bearer, async () => {
      const found = await findKeyWithProjectByHash(this.deps.store.fast, hashKey(bearer));
      return found && found.key.revokedAt === null ? found : null;
    });
    if (!principal) return null;
    this.pendingTouches.set(principal.key.id, this.deps.clock.now());
    return principal;
  }

  /**
   * The principal a key had when it last succeeded in this process, from
   * memory alone (no database read, however long ago): lets a key already
   * seen succeed past its client address's failure throttle
   * (lib/auth-throttle.ts). Not an authentication: the key may have been
   * revoked since, so `authenticate` still decides.
   */
  known(bearer: string): Principal | null {
    return this.cache.peek(bearer) ?? null;
  }

  /** The principal of a key named by its id (a dashboard session), null once it is revoked. */
  async principalOfKey(id: string): Promise<Principal | null> {
    const found = await findKeyWithProjectById(this.deps.store.reader, id);
    if (!found || found.key.revokedAt !== null) return null;
    this.pendingTouches.set(found.key.id, this.deps.clock.now());
    return found;
  }

  /**
   * Read again what was read: a key or project changed in this process.
   * `known` still answers for a key until its next read finds it revoked:
   * a revocation of any key must not lock every other key's client out of a
   * refused address.
   */
  invalidate(): void {
    this.cache.expireAll();
  }

  async flushLastUsed(): Promise<void> {
    if (this.pendingTouches.size === 0) return;
    const batch = new Map(this.pendingTouches);
    this.pendingTouches.clear();
    await this.deps.store.tx((trx) => touchKeys(trx, batch));
  }
}

/** What the /v1/api-keys routes use: a revocation counts at once in this process. */
export function keyService(deps: KeyDeps, auth: KeyAuthenticator) {
  return {
    list: (projectId: string) => listKeys(deps, projectId),
    create: (input: CreateKeyInput) => createKey(deps, input),
    rename: (id: string, projectId: string, name: string | null) => renameKey(deps, id, projectId, name),
    async revoke(id: string, projectId: string): Promise<ApiKey> {
      const key = await revokeKey(deps, id, projectId);
      auth.invalidate();
      return key;
    },
  };
}

export type KeyService = ReturnType<typeof keyService>;
