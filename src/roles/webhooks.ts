import type { Clock } from '../lib/time.js';
import type { Logger } from '../log/logger.js';
import { WebhookDispatcher } from '../modules/webhooks/dispatcher.js';
import { closeEgressAgents, guardedRequest, type EgressOptions } from '../net/egress.js';
import type { GroupCommit } from '../store/group-commit.js';
import type { Store } from '../store/store.js';
import type { Role } from './role.js';

/** webhooks.retry_schedule and webhooks.timeout_ms; the egress guard built from network.* and webhooks.ca_file. */
export interface WebhooksSlice {
  retryScheduleMs: readonly number[];
  timeoutMs: number;
  endpointConcurrency: number;
  concurrency: number;
  egress: EgressOptions;
  userAgent: string;
}

export interface WebhooksRole extends Role {
  dispatcher: WebhookDispatcher;
}

/** The webhook dispatcher: the event outbox fanned out to endpoints, signed POSTs through the SSRF guard. */
export async function startWebhooks(slice: WebhooksSlice, deps: { store: Store; writer: GroupCommit; clock: Clock; logger: Logger }): Promise<WebhooksRole> {
  const dispatcher = new WebhookDispatcher({
    ...deps,
    owner: `webhooks:${process.pid}`,
    retryScheduleMs: slice.retryScheduleMs,
    requestTimeoutMs: slice.timeoutMs,
    windows: { max: slice.endpointConcurrency },
    concurrency: slice.concurrency,
    userAgent: slice.userAgent,
    post: async (url, headers, body, signal) => {
      const res = await guardedRequest(url, { method: 'POST', headers, body, signal }, slice.egress);
      return { status: res.status, durationMs: res.durationMs };
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
