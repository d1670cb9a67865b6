import { DEFAULT_SUBSCRIPTION, type EventType } from '../events/event-types.js';
import { generateWebhookSecret } from './sign.js';
import {
  DEFAULT_PAYLOAD_FORMAT,
  DEFAULT_SIGNATURE_FORMAT,
  type PayloadFormat,
  type SignatureFormat,
} from './webhook-formats.js';
import type { Endpoint } from './webhooks.repo.js';

/** What an endpoint is made from: only the url is required. */
export interface EndpointInput {
  events?: EventType[] | undefined;
  description?: string | undefined;
  signature?: SignatureFormat | undefined;
  payload?: PayloadFormat | undefined;
}

/**
 * An active endpoint with a new secret, subscribed to `events` or to what an endpoint created
 * without them gets, in the service's formats unless it names others.
 */
export function newEndpoint(projectId: string, id: string, url: string, input: EndpointInput, now: number): Endpoint {
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
    signatureFormat: input.signature ?? DEFAULT_SIGNATURE_FORMAT,
    payloadFormat: input.payload ?? DEFAULT_PAYLOAD_FORMAT,
    createdAt: now,
    updatedAt: now,
  };
}
