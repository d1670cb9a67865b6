import type { Knex } from 'knex';
import { apiError, notFound, validationError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import type { Clock } from '../../../lib/time.js';
import type { Store } from '../../../store/store.js';
import type { EventType } from '../events/event-types.js';
import { findEvent, insertEvents } from '../events/events.repo.js';
import { newDelivery } from './deliveries.js';
import type { ListenHub } from './listen-hub.js';
import { createListenEndpoint, openListenStream } from './listen.service.js';
import { newEndpoint, type EndpointInput } from './new-endpoint.js';
import { generateWebhookSecret } from './sign.js';
import { testEvent, type TestEventType } from './test-event.js';
import { insertDeliveries, type WebhookDelivery } from './webhook-deliveries.repo.js';
import { attemptsOf, deliveriesOfEndpoint, deliveriesOfEvents } from './webhook-log.repo.js';
import * as repo from './webhooks.repo.js';
import type { Endpoint } from './webhooks.repo.js';
import { idPage } from '../../../lib/page.js';
import type { PayloadFormat, SignatureFormat } from './webhook-formats.js';

// One service for every surface that manages endpoints: the /v1 routes, the dashboard (through
// them) and a Resend-compatible surface, which creates its endpoints with RESEND_COMPATIBLE.
export {
  PAYLOAD_FORMATS,
  RESEND_COMPATIBLE,
  SIGNATURE_FORMATS,
  type PayloadFormat,
  type SignatureFormat,
} from './webhook-formats.js';
export type { EndpointInput } from './new-endpoint.js';

/** interface §6: the old secret keeps signing this long after a rotation. */
export const OLD_SECRET_VALIDITY_MS = 24 * 3_600_000;

export interface WebhookDeps {
  store: Store;
  clock: Clock;
  /** the SSRF guard: resolves and refuses non-https or non-public URLs; message says why */
  checkEndpointUrl(url: string): Promise<void>;
  /** first delay of webhooks.retry_schedule (a replay starts a new series) */
  firstAttemptDelayMs: number;
  /** wake the dispatcher after a replay */
  onQueued?: () => void;
  /** the `posthorn listen` streams connected to this process (listen-hub.ts); absent where no API runs */
  listen?: ListenHub;
}

async function checkUrl(deps: WebhookDeps, url: string): Promise<string> {
  try {
    await deps.checkEndpointUrl(url);
  } catch (e) {
    throw validationError('url', (e as Error).message);
  }
  return url;
}

/**
 * A new endpoint; `signature` and `payload` pick its formats (the service's by default, or
 * RESEND_COMPATIBLE for an endpoint that Resend's SDK verifies and reads).
 */
export async function createEndpoint(
  deps: WebhookDeps,
  projectId: string,
  input: EndpointInput & { url: string },
): Promise<Endpoint> {
  const url = await checkUrl(deps, input.url);
  const now = deps.clock.now();
  const endpoint = newEndpoint(projectId, newId('webhook', now), url, input, now);
  await deps.store.tx((trx) => repo.insertEndpoint(trx, endpoint));
  return endpoint;
}

export async function getEndpoint(deps: Pick<WebhookDeps, 'store'>, projectId: string, id: string): Promise<Endpoint> {
  const e = await repo.findEndpoint(deps.store.reader, projectId, id);
  if (!e) throw notFound(`webhook endpoint ${id}`);
  return e;
}

export function listEndpoints(deps: Pick<WebhookDeps, 'store'>, projectId: string): Promise<Endpoint[]> {
  return repo.listEndpoints(deps.store.reader, projectId);
}

export async function updateEndpoint(
  deps: WebhookDeps,
  projectId: string,
  id: string,
  patch: {
    url?: string | undefined;
    events?: EventType[] | undefined;
    active?: boolean | undefined;
    description?: string | null | undefined;
    signature?: SignatureFormat | undefined;
    payload?: PayloadFormat | undefined;
  },
): Promise<Endpoint> {
  const url = patch.url === undefined ? undefined : await checkUrl(deps, patch.url);
  return deps.store.tx(async (trx) => {
    const e = await repo.findEndpoint(trx, projectId, id);
    if (!e) throw notFound(`webhook endpoint ${id}`);
    const next: Endpoint = {
      ...e,
      url: url ?? e.url,
      events: patch.events ?? e.events,
      active: patch.active ?? e.active,
      description: patch.description === undefined ? e.description : patch.description,
      signatureFormat: patch.signature ?? e.signatureFormat,
      payloadFormat: patch.payload ?? e.payloadFormat,
      updatedAt: deps.clock.now(),
    };
    await repo.saveEndpoint(trx, next);
    return next;
  });
}

/** Deleting an endpoint deletes its deliveries, pending ones included: nothing more is sent to it (a listen stream here ends). */
export async function deleteEndpoint(
  deps: Pick<WebhookDeps, 'store' | 'listen'>,
  projectId: string,
  id: string,
): Promise<Endpoint> {
  const deleted = await deps.store.tx(async (trx) => {
    const e = await repo.findEndpoint(trx, projectId, id);
    if (!e) throw notFound(`webhook endpoint ${id}`);
    await repo.deleteEndpoint(trx, id);
    return e;
  });
  deps.listen?.disconnect(id);
  return deleted;
}

/**
 * The new secret signs from now on and the one it replaces keeps signing for
 * OLD_SECRET_VALIDITY_MS, so a request carries two v1= signatures at most.
 * Only the immediately previous secret is kept: rotating again within 24
 * hours retires the older one at once (a receiver still on it fails), which
 * keeps the endpoint to two columns and the header to two signatures.
 */
export async function rotateSecret(
  deps: Pick<WebhookDeps, 'store' | 'clock'>,
  projectId: string,
  id: string,
): Promise<Endpoint> {
  return deps.store.tx(async (trx) => {
    const e = await repo.findEndpoint(trx, projectId, id);
    if (!e) throw notFound(`webhook endpoint ${id}`);
    const now = deps.clock.now();
    const next: Endpoint = {
      ...e,
      secret: generateWebhookSecret(),
      previousSecret: e.secret,
      previousSecretUntil: now + OLD_SECRET_VALIDITY_MS,
      updatedAt: now,
    };
    await repo.saveEndpoint(trx, next);
    return next;
  });
}

/**
 * One event to one active endpoint of the project, due now, in one transaction: `eventOf` finds the
 * event (a replay) or makes it (a test event). A paused endpoint is refused: it takes no event.
 */
async function queueOne(
  deps: WebhookDeps,
  projectId: string,
  endpointId: string,
  eventOf: (trx: Knex.Transaction, now: number) => Promise<{ id: string; projectId: string }>,
): Promise<WebhookDelivery> {
  const delivery = await deps.store.tx(async (trx) => {
    const e = await repo.findEndpoint(trx, projectId, endpointId);
    if (!e) throw notFound(`webhook endpoint ${endpointId}`);
    const now = deps.clock.now();
    const event = await eventOf(trx, now);
    if (!e.active) throw apiError('conflict', `webhook endpoint ${endpointId} is not active`);
    const d = newDelivery(event, endpointId, now, 0);
    await insertDeliveries(trx, [d]);
    return d;
  });
  deps.onQueued?.();
  return delivery;
}

/** interface §6 rule 4: a replay sends the same event (same id) again, as a new series of attempts. */
export function replayEvent(deps: WebhookDeps, projectId: string, endpointId: string, eventId: string) {
  return queueOne(deps, projectId, endpointId, async (trx) => {
    const event = await findEvent(trx, eventId, projectId);
    if (!event) throw notFound(`event ${eventId}`);
    return event;
  });
}

/** A test event (test-event.ts) to this endpoint alone, whatever types it subscribes to. */
export function sendTestEvent(deps: WebhookDeps, projectId: string, endpointId: string, type: TestEventType) {
  return queueOne(deps, projectId, endpointId, async (trx, now) => {
    const event = testEvent(projectId, type, now);
    // stored already fanned out: no other endpoint gets it
    await insertEvents(trx, [event], true);
    return event;
  });
}

export async function deliveryLog(
  deps: Pick<WebhookDeps, 'store'>,
  projectId: string,
  endpointId: string,
  limit: number,
  cursor?: string,
) {
  const e = await repo.findEndpoint(deps.store.reader, projectId, endpointId);
  if (!e) throw notFound(`webhook endpoint ${endpointId}`);
  const page = idPage(await deliveriesOfEndpoint(deps.store.reader, endpointId, limit + 1, cursor), limit);
  const attempts = await attemptsOf(
    deps.store.reader,
    page.items.map((d) => d.id),
  );
  return { page, attempts };
}

function hubOf(deps: WebhookDeps): ListenHub {
  if (!deps.listen) throw apiError('service_unavailable', 'this process serves no posthorn listen streams');
  return deps.listen;
}

/** What the /v1/webhooks routes use. */
export function webhookService(deps: WebhookDeps) {
  return {
    create: (projectId: string, input: Parameters<typeof createEndpoint>[2]) => createEndpoint(deps, projectId, input),
    get: (projectId: string, id: string) => getEndpoint(deps, projectId, id),
    list: (projectId: string) => listEndpoints(deps, projectId),
    update: (projectId: string, id: string, patch: Parameters<typeof updateEndpoint>[3]) =>
      updateEndpoint(deps, projectId, id, patch),
    delete: (projectId: string, id: string) => deleteEndpoint(deps, projectId, id),
    rotateSecret: (projectId: string, id: string) => rotateSecret(deps, projectId, id),
    deliveryLog: (projectId: string, id: string, limit: number, cursor?: string) =>
      deliveryLog(deps, projectId, id, limit, cursor),
    deliveriesOfEvents: (projectId: string, eventIds: string[]) =>
      deliveriesOfEvents(deps.store.reader, projectId, eventIds),
    replay: (projectId: string, id: string, eventId: string) => replayEvent(deps, projectId, id, eventId),
    sendTest: (projectId: string, id: string, type: TestEventType) => sendTestEvent(deps, projectId, id, type),
    createListener: (projectId: string, input: Parameters<typeof createListenEndpoint>[2]) =>
      createListenEndpoint({ ...deps, hub: hubOf(deps) }, projectId, input),
    /** `keyId`: the key that opens the stream, read again at each heartbeat */
    listen: (projectId: string, id: string, keyId: string) =>
      openListenStream({ ...deps, hub: hubOf(deps) }, projectId, id, keyId),
    /** the API is stopping: every stream ended, their endpoints deleted */
    closeListeners: async () => deps.listen?.close(),
  };
}

export type WebhookService = ReturnType<typeof webhookService>;
