import type { Config } from './config/config.js';
import type { Core } from './core.js';
import { PACKAGE_VERSION } from './config/package-root.js';
import { publicKeyFor } from './modules/deliverability/domains/domain-keys.repo.js';
import { RateLimiter } from './lib/rate-limiter.js';
import { createResolver } from './dns/resolver.js';
import { type ListenerOptions } from './smtp/listener.js';
import { startMxListener } from './smtp/mx-listener.js';
import { startSubmissionListener } from './smtp/submission.js';
import { startApi } from './roles/api.js';
import { startDns } from './roles/dns.js';
import { startKeyUsage } from './roles/key-usage.js';
import { startRequestLogs } from './roles/request-logs.js';
import { startMetricsListener } from './roles/metrics.js';
import type { Starting } from './role-selection.js';

// The roles that listen on a port (the DKIM zone server, the API with its
// /metrics, the MX and submission listeners), each with its slice of the
// config: the roles of the API thread of `serve`.

export async function startDnsRole({ config, core, running, started }: Starting): Promise<void> {
  if (!config.dns.server.enabled) return;
  const { zone, server } = config.dns;
  const slice = {
    zone,
    nameserver: config.outbound.hostname,
    host: server.host,
    port: server.port,
    keyTtlSeconds: Math.ceil(config.dkim.keyTtlMs / 1000),
  };
  const dns = await startDns(
    slice,
    (token, selector) => publicKeyFor(core.deps.store.reader, token, selector),
    core.deps.logger,
  );
  started.push(dns);
  running.dnsPort = dns.port;
}

export async function startApiRoles({ config, core, listen, running, started }: Starting): Promise<void> {
  const { logger, clock } = core.deps;
  // started before the API, so that it stops after it: the last requests' key uses are written too
  started.push(startKeyUsage(core.deps.auth, logger));
  started.push(startRequestLogs(core.services.logs, logger));
  const metricsOnApi = config.metrics.port === null;
  if (!metricsOnApi) {
    const metrics = await startMetricsListener(
      { host: config.metrics.host, port: config.metrics.port! },
      core.services.metrics,
      logger,
    );
    started.push(metrics);
    running.metricsPort = metrics.port;
  }
  const edge = {
    requestsPerSecond: config.limits.requestsPerSecond,
    logger,
    clock,
    version: PACKAGE_VERSION,
    publicUrl: config.http.publicUrl,
    metrics: metricsOnApi,
  };
  const api = await startApi(listen, core.services, edge, config.dashboard.enabled);
  started.push(api);
  running.api = api;
}

/** A client's name (smtp.reverse_dns) through dns.resolvers, one try of 1.5 s: a slow PTR answer delays every greeting; a client without one is served as [address]. */
const REVERSE_LOOKUP = { timeoutMs: 1500, tries: 1 };

/** What both SMTP listeners take from the config (without smtp.tls, each may make its certificate: smtp/self-signed-tls.ts). */
function listenerOptions(config: Config, core: Core, name: string, l: Config['smtp']['inbound']): ListenerOptions {
  const reverse = config.smtp.reverseDns ? createResolver({ servers: config.dns.resolvers, ...REVERSE_LOOKUP }) : null;
  const { smtp, outbound, dataDir } = config;
  return {
    name,
    host: l.host,
    port: l.port,
    hostname: outbound.hostname,
    tls: smtp.tls,
    secure: !!l.secure,
    dataDir,
    maxBytes: l.maxMessageBytes,
    maxClients: smtp.maxClients,
    limits: smtp.limits,
    reverse: reverse ? (ip) => reverse.reverse(ip) : null,
    logger: core.deps.logger,
  };
}

export async function startInboundRole({ config, core, running, started }: Starting): Promise<void> {
  if (!config.smtp.inbound.enabled) return;
  const mx = await startMxListener(
    listenerOptions(config, core, 'inbound', config.smtp.inbound),
    core.services.inbound,
  );
  started.push({ name: 'inbound', stop: () => mx.close() });
  running.inboundPort = mx.port;
}

export async function startSubmissionRole({ config, core, running, started }: Starting): Promise<void> {
  if (!config.smtp.submission.enabled) return;
  const { auth, emails } = core.services;
  const limiter = new RateLimiter(config.limits.requestsPerSecond, core.deps.clock);
  const sub = await startSubmissionListener(listenerOptions(config, core, 'submission', config.smtp.submission), {
    auth,
    emails,
    limiter,
    throttle: core.deps.authThrottle,
    read: (job) => core.parsing.run('submitted', job),
  });
  started.push({ name: 'submission', stop: () => sub.close() });
  running.submissionPort = sub.port;
}
