import { DEFAULT_SUBSCRIPTION, type EventType } from '../events/event-types.js';
import { generateWebhookSecret } from './sign.js';
import type { Endpoint } from './webhooks.repo.js';

/** An active endpoint with a new secret, subscribed to `events` or to what an endpoint created without them gets. */
export function newEndpoint(
  projectId: string,
  id: string,
  url: string,
  input: { events?: EventType[] | undefined; description?: string | undefined },
  now: number,
): Endpoint {
  return {
    id,
    projectId,
    url,
    description: input.description ?? null,
    events: input.events ?? [...DEFAULT_SUBSCRIPTION],
    active: true,
    secret: generateWebhookSecret(),
    previousSecret: null,
    previousSecretUntil: null,
    createdAt: now,
    updatedAt: now,
  };
}
