import type { Readable } from 'node:stream';
import { apiError, notFound } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import type { Clock } from '../../../lib/time.js';
import type { Store } from '../../../store/store.js';
import type { EventType } from '../events/event-types.js';
import { findKeyWithProjectById } from '../../account/keys/keys.repo.js';
import type { ListenHub } from './listen-hub.js';
import { LISTEN_URL_PREFIX, listenEndpointOf, listenUrl, type ListenEnd } from './listen-stream.js';
import * as repo from './webhooks.repo.js';
import type { Endpoint } from './webhooks.repo.js';
import { newEndpoint } from './new-endpoint.js';

// `posthorn listen` (docs/webhooks.md): a webhook endpoint of the key's
// project whose deliveries go down a stream the CLI holds open, deleted when
// that stream closes. It is an endpoint like any other for the fan-out, the
// dispatcher, the delivery log and the dashboard; only its url is a marker.

export interface ListenDeps {
  store: Store;
  clock: Clock;
  /** this process's open streams */
  hub: ListenHub;
}

export const isListenEndpoint = (e: Pick<Endpoint, 'id' | 'url'>): boolean => listenEndpointOf(e.url) === e.id;

/** A project's listen endpoints at most, connected or not: each is a `posthorn listen` running (or starting). */
export const MAX_LISTEN_ENDPOINTS = 10;

/**
 * A new listen endpoint, subscribed to `events` or to what an endpoint
 * created without them gets; deleted if its stream has not connected to this
 * process within the hub's connectWithinMs (60 s).
 */
export async function createListenEndpoint(
  deps: Pick<ListenDeps, 'store' | 'clock' | 'hub'>,
  projectId: string,
  input: { events?: EventType[] | undefined },
): Promise<Endpoint> {
  const now = deps.clock.now();
  const id = newId('webhook', now);
  const endpoint = newEndpoint(
    projectId,
    id,
    listenUrl(id),
    { events: input.events, description: 'posthorn listen' },
    now,
  );
  await deps.store.tx(async (trx) => {
    const open = await repo.countEndpointsWithUrlPrefix(trx, projectId, LISTEN_URL_PREFIX);
    if (open >= MAX_LISTEN_ENDPOINTS) {
      throw apiError(
        'conflict',
        `this project has ${open} posthorn listen endpoints open, the most it may have; each is deleted when its posthorn listen stops (or 60 s after its creation if it never connected): stop one, or delete one with DELETE /v1/webhooks/{id}`,
      );
    }
    await repo.insertEndpoint(trx, endpoint);
  });
  deps.hub.expectStream(id, () => deleteListenEndpoint(deps, id));
  return endpoint;
}

/**
 * The stream of a listen endpoint of the project, opened with key `keyId`;
 * when it closes (the CLI stopped or was killed, the connection broke, the
 * key was revoked, the API is stopping) the endpoint is deleted with its
 * pending deliveries: nothing is left behind.
 */
export async function openListenStream(
  deps: ListenDeps,
  projectId: string,
  id: string,
  keyId: string,
): Promise<Readable> {
  const e = await repo.findEndpoint(deps.store.reader, projectId, id);
  if (!e) throw notFound(`webhook endpoint ${id}`);
  if (!isListenEndpoint(e))
    throw apiError(
      'conflict',
      `webhook endpoint ${id} is not a posthorn listen endpoint (create one with POST /v1/webhooks/listen)`,
    );
  const connected = deps.hub.connect(id, {
    onClosed: () => deleteListenEndpoint(deps, id),
    recheck: () => standing(deps, projectId, id, keyId),
  });
  switch (connected.kind) {
    case 'connected':
      return connected.stream;
    case 'taken':
      throw apiError('conflict', `webhook endpoint ${id} has a listener connected already`);
    case 'full':
      throw apiError(
        'service_unavailable',
        'this API process holds as many posthorn listen streams as it may; try again once one has stopped',
      );
    case 'closing':
      throw apiError('service_unavailable', 'the API is stopping; connect again once it is back');
  }
}

/**
 * What the API checks at each request, read again while a stream is open
 * (the same read as a dashboard session's, no cache): the key that opened
 * it unrevoked and holding webhooks:manage, its project not suspended; and
 * the endpoint still a listen endpoint (a deletion made by another process).
 */
async function standing(
  deps: Pick<ListenDeps, 'store'>,
  projectId: string,
  id: string,
  keyId: string,
): Promise<ListenEnd | null> {
  const [principal, e] = await Promise.all([
    findKeyWithProjectById(deps.store.reader, keyId),
    repo.findEndpoint(deps.store.reader, projectId, id),
  ]);
  if (!e) return 'endpoint_deleted';
  if (!isListenEndpoint(e)) return 'endpoint_changed';
  if (
    !principal ||
    principal.key.revokedAt !== null ||
    principal.key.projectId !== projectId ||
    !principal.key.scopes.includes('webhooks:manage')
  )
    return 'key_revoked';
  if (principal.project.suspended) return 'project_suspended';
  return null;
}

async function deleteListenEndpoint(deps: Pick<ListenDeps, 'store'>, id: string): Promise<void> {
  await deps.store.tx((trx) => repo.deleteEndpointWithUrl(trx, id, listenUrl(id)));
}

/**
 * At the start of a process that is the only one on its database (SQLite):
 * every listen endpoint is left over, since no stream survives a restart.
 */
export async function deleteLeftoverListenEndpoints(store: Store): Promise<number> {
  return store.tx((trx) => repo.deleteEndpointsWithUrlPrefix(trx, LISTEN_URL_PREFIX));
}
