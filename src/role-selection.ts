import type { Config } from './config/config.js';
import type { Core } from './core.js';
import type { ApiListen, ApiRole } from './roles/api.js';
import type { MtaRole } from './roles/mta.js';
import type { Role } from './roles/role.js';
import type { WebhooksRole } from './roles/webhooks.js';

// What startRoles (start-roles.ts) is asked to start, what it gives back, and
// what each role starter (listener-roles.ts, queue-roles.ts) works with.

/** Which roles to run; `serve` runs all of them, over two threads; tests pick. */
export interface RoleSelection {
  api?: boolean;
  mta?: boolean;
  webhooks?: boolean;
  dns?: boolean;
  jobs?: boolean;
  /** the MX listener (smtp.inbound) */
  inbound?: boolean;
  /** SMTP submission (smtp.submission) */
  submission?: boolean;
}

export interface RunningRoles {
  api: ApiRole | null;
  /** the port of the DKIM zone server, when it runs */
  dnsPort: number | null;
  mta: MtaRole | null;
  webhooks: WebhooksRole | null;
  /** the ports the SMTP listeners took (port 0 in the config picks a free one) */
  inboundPort: number | null;
  submissionPort: number | null;
  /** the port of /metrics when metrics.port gives it a listener of its own */
  metricsPort: number | null;
  stop(): Promise<void>;
}

/** What a role starter gets: it picks its slice of the config, and records what it started. */
export interface Starting {
  config: Config;
  core: Core;
  listen: ApiListen;
  running: RunningRoles;
  /** this process's node id: the owner of the leases its MTA and dispatcher take */
  nodeId: string;
  /** every role started so far, stopped in reverse order */
  started: Role[];
}
