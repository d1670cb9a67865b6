import type { Readable } from 'node:stream';
import { apiError, notFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { Clock } from '../../lib/time.js';
import type { Store } from '../../store/store.js';
import type { EventType } from '../events/event-types.js';
import type { ListenHub } from './listen-hub.js';
import { LISTEN_URL_PREFIX, listenEndpointOf, listenUrl } from './listen-stream.js';
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

/** A new listen endpoint, subscribed to `events` or to what an endpoint created without them gets. */
export async function createListenEndpoint(deps: Pick<ListenDeps, 'store' | 'clock'>, projectId: string, input: { events?: EventType[] | undefined }): Promise<Endpoint> {
  const now = deps.clock.now();
  const id = newId('webhook', now);
  const endpoint = newEndpoint(projectId, id, listenUrl(id), { events: input.events, description: 'posthorn listen' }, now);
  await deps.store.tx((trx) => repo.insertEndpoint(trx, endpoint));
  return endpoint;
}

/**
 * The stream of a listen endpoint of the project; when it closes (the CLI
 * stopped or was killed, the connection broke, the API is stopping) the
 * endpoint is deleted with its pending deliveries: nothing is left behind.
 */
export async function openListenStream(deps: ListenDeps, projectId: string, id: string): Promise<Readable> {
  const e = await repo.findEndpoint(deps.store.reader, projectId, id);
  if (!e) throw notFound(`webhook endpoint ${id}`);
  if (!isListenEndpoint(e)) throw apiError('conflict', `webhook endpoint ${id} is not a posthorn listen endpoint (create one with POST /v1/webhooks/listen)`);
  if (deps.hub.closing) throw apiError('service_unavailable', 'the API is stopping; connect again once it is back');
  const stream = deps.hub.connect(id, () => deleteListenEndpoint(deps, id));
  if (!stream) throw apiError('conflict', `webhook endpoint ${id} has a listener connected already`);
  return stream;
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
