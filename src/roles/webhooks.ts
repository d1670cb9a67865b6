import type { Clock } from '../lib/time.js';
import type { Logger } from '../log/logger.js';
import { WebhookDispatcher } from '../modules/notifying/webhooks/dispatcher.js';
import { LISTEN_FAILURES } from '../modules/notifying/webhooks/listen-hub.js';
import { listenEndpointOf, type ListenOutcome, type ListenSink } from '../modules/notifying/webhooks/listen-stream.js';
import type { WebhookPost } from '../modules/notifying/webhooks/signed-post.js';
import { closeEgressAgents, guardedRequest, type EgressOptions } from '../net/egress.js';
import type { GroupCommit } from '../store/group-commit.js';
import type { Store } from '../store/store.js';
import type { Role } from './role.js';

/** webhooks.retry_schedule and webhooks.timeout_ms; the egress guard built from network.* and webhooks.ca_file. */
export interface WebhooksSlice {
  attemptDelaysMs: readonly number[];
  timeoutMs: number;
  endpointConcurrency: number;
  concurrency: number;
  egress: EgressOptions;
  userAgent: string;
}

export interface WebhooksRole extends Role {
  dispatcher: WebhookDispatcher;
}

/**
 * The webhook dispatcher: the event outbox fanned out to endpoints, signed POSTs through the SSRF guard.
 * `listen`: where a `posthorn listen` endpoint's deliveries go instead (its url is a marker, never requested).
 */
export async function startWebhooks(
  slice: WebhooksSlice,
  deps: { store: Store; writer: GroupCommit; clock: Clock; logger: Logger; listen: ListenSink; owner: string },
): Promise<WebhooksRole> {
  const { listen, ...dispatcherDeps } = deps;
  const dispatcher = new WebhookDispatcher({
    ...dispatcherDeps,
    attemptDelaysMs: slice.attemptDelaysMs,
    requestTimeoutMs: slice.timeoutMs,
    windows: { max: slice.endpointConcurrency },
    concurrency: slice.concurrency,
    userAgent: slice.userAgent,
    post: async (url, headers, body, signal) => {
      const listener = listenEndpointOf(url);
      if (listener !== null) return postToListener(listen, listener, headers, body, signal);
      const res = await guardedRequest(url, { method: 'POST', headers, body, signal }, slice.egress);
      return { status: res.status, durationMs: res.durationMs, body: res.body };
    },
  });
  await dispatcher.start();
  return {
    name: 'webhooks',
    dispatcher,
    async stop() {
      await dispatcher.stop();
      await closeEgressAgents();
    },
  };
}

/**
 * A listen endpoint's "POST": its frame queued on the stream connected to
 * the API (200), or an error when none is (the CLI may not have connected
 * yet, or is gone and its endpoint about to be) or its reader is too far
 * behind; the retry schedule applies to both.
 */
async function postToListener(
  listen: ListenSink,
  endpointId: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
): ReturnType<WebhookPost> {
  const started = performance.now();
  signal.throwIfAborted();
  // the answer may have to come from the API thread: a shutdown does not wait for it
  const outcome = await new Promise<ListenOutcome>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    listen(endpointId, { headers, body })
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', onAbort));
  });
  if (outcome !== 'written') throw new Error(LISTEN_FAILURES[outcome]);
  return { status: 200, durationMs: Math.round(performance.now() - started) };
}
