import { readFileSync } from 'node:fs';
import { GroupCommit } from './store/group-commit.js';
import type { Config } from './config/config.js';
import { buildFanOut, type Core } from './core.js';
import { egressOptions, USER_AGENT } from './egress-options.js';
import { recheckDomains } from './modules/deliverability/domains/verification.service.js';
import { advanceRotations, describeRotation } from './modules/deliverability/domains/dkim-rotation.service.js';
import {
  blocklistChecker,
  checkBlocklists,
  describeBlocklistRun,
} from './modules/deliverability/blocklists/blocklists.service.js';
import { purgeIdempotencyKeys } from './modules/sending/emails/emails.service.js';
import { pruneShapingState } from './modules/deliverability/shaping/shaping.service.js';
import { describePrune } from './modules/operations/retention/retention.service.js';
import { workerHandoff } from './mta/handoff.js';
import { LiveAttempt } from './mta/live-attempt.js';
import { SmtpSender } from './mta/smtp-sender.js';
import { STS_MAX_POLICY_BYTES } from './mta/tls-policy/mta-sts.js';
import { outboundTls, STS_FETCH_TIMEOUT_MS, withSecurity } from './mta/tls-policy/outbound-tls.js';
import type { StsFetch } from './mta/tls-policy/sts-policies.js';
import {
  describeTlsReportRun,
  sendTlsReports,
  tlsReportSettings,
  type TlsReportPost,
} from './mta/tls-policy/tls-report-sender.js';
import type { DnsResolver } from './dns/resolver.js';
import { guardedRequest } from './net/egress.js';
import { ProviderTable } from './mta/shaping/provider-table.js';
import { Shaper } from './mta/shaping/shaper.js';
import { startJobs, type Job } from './roles/jobs.js';
import { startFanOut } from './roles/broadcasts.js';
import { startMta } from './roles/mta.js';
import { startSigning } from './roles/signing.js';
import { startWebhooks } from './roles/webhooks.js';
import type { Starting } from './role-selection.js';

// The roles that work the database's queues (the MTA, the webhook
// dispatcher, the jobs and the broadcast fan-out), each with its slice of the
// config: the roles of the background thread of `serve`.

export async function startMtaRoles({ config, core, running, started, nodeId }: Starting): Promise<void> {
  const { store, clock, logger, resolver, tracking } = core.deps;
  // stopped after the MTA
  const signing = startSigning(logger);
  started.push(signing);
  const { outbound } = config;
  // MTA-STS and DANE in direct mode (docs/transport-security.md), outbound.ca_file for them and the relay
  const ca = outbound.caFile ? readFileSync(outbound.caFile) : null;
  const write = (fn: Parameters<typeof core.writer.run>[0]) => core.writer.run(fn);
  const tls = outboundTls(config, { store, clock, logger, resolver, write }, stsFetch(config, resolver, ca));
  const sender = new SmtpSender({
    hostname: outbound.hostname,
    maxConnectionsPerDestination: outbound.maxConnectionsPerDomain,
    logger,
    ...(ca ? { ca } : {}),
    ...(tls.counter ? { tlsReport: tls.counter } : {}),
  });
  // Traffic shaping applies to direct delivery: a relay shapes its own traffic.
  const shaper =
    outbound.mode === 'direct' && outbound.shaping
      ? new Shaper({
          table: new ProviderTable(outbound.providers, outbound.backoff, outbound.maxConnectionsPerDomain),
          sources: { ips: outbound.ips, bulkPool: outbound.bulkPool, warmupSchedule: outbound.warmupSchedule },
          clock,
          logger,
          store,
          writer: core.writer,
        })
      : null;
  await shaper?.start();
  const live = new LiveAttempt({
    store,
    resolver,
    sender,
    outbound: withSecurity(outbound, tls),
    tracking,
    signer: signing.signer,
    ...(shaper ? { shaper } : {}),
  });
  const mta = await startMta({
    store,
    writer: core.writer,
    clock,
    logger,
    testDomain: config.testDomain,
    owner: nodeId,
    retryDelaysMs: outbound.retryDelaysMs,
    attemptLive: live.attempt,
    closeLive: async () => {
      await sender.close();
      await shaper?.stop();
      await tls.counter?.stop();
    },
  });
  started.push(mta);
  running.mta = mta;
  core.onWake('mta', () => mta.wake());
  core.setHandoff(workerHandoff(mta.worker));
}

/** MTA-STS policies come through the SSRF guard (RFC 8461 §3.3: HTTPS, 200 only, no redirect followed), trusting outbound.ca_file. */
function stsFetch(config: Config, resolver: DnsResolver, ca: Buffer | null): StsFetch {
  const egress = { ...egressOptions(config, resolver, STS_FETCH_TIMEOUT_MS), ca };
  return (url) => guardedRequest(url, { method: 'GET', maxBodyBytes: STS_MAX_POLICY_BYTES }, egress);
}

export async function startWebhooksRole({ config, core, running, started, nodeId }: Starting): Promise<void> {
  const { webhooks } = config;
  const slice = {
    attemptDelaysMs: webhooks.attemptDelaysMs,
    timeoutMs: webhooks.timeoutMs,
    endpointConcurrency: webhooks.endpointConcurrency,
    concurrency: webhooks.concurrency,
    egress: egressOptions(config, core.deps.resolver, webhooks.timeoutMs),
    userAgent: USER_AGENT,
  };
  const role = await startWebhooks(slice, {
    owner: nodeId,
    store: core.deps.store,
    // On PostgreSQL the dispatcher commits in a lane of its own, beside the accepts' (another pooled
    // connection): its claims and records no longer wait in line behind every accept's commit, which
    // held each claim ~45 ms and kept an endpoint's window half empty in a two-node bench (median
    // event → delivery 3.1 s before, 0.9 s after). SQLite has one writer for all.
    writer: core.deps.store.client === 'pg' ? new GroupCommit(core.deps.store) : core.writer,
    clock: core.deps.clock,
    logger: core.deps.logger,
    listen: core.listenSink,
  });
  started.push(role);
  running.webhooks = role;
  core.onWake('dispatcher', () => role.dispatcher.wake());
}

export async function startJobsRole({ config, core, started }: Starting): Promise<void> {
  const { clock, logger } = core.deps;
  started.push(startJobs(scheduledJobs(config, core), logger));
  if (core.acceptQueue)
    started.push(
      startFanOut(buildFanOut(config, core, core.acceptQueue), clock, logger, (wake) =>
        core.onWake('broadcasts', wake),
      ),
    );
}

/** The cron jobs (jobs.*, and the fixed schedules of the housekeeping ones), each saying what it did. */
function scheduledJobs(config: Config, core: Core): Job[] {
  const { store, clock, logger } = core.deps;
  const ttl = config.limits.idempotencyTtlMs;
  // one checker for the process: it keeps each list's answers for their TTL
  const blocklists = blocklistChecker(config.dns.resolvers, clock, config.blocklists.queriesPerSecond);
  const failedFor = (what: string) => (d: { name: string }, e: unknown) =>
    logger.warn({ err: e, domain: d.name }, what);
  return [
    {
      name: 'domain_recheck',
      schedule: config.jobs.domainRecheck,
      run: async () =>
        `${await recheckDomains(core.deps, failedFor('domain re-check failed'))} domain(s) changed status`,
    },
    {
      name: 'idempotency_purge',
      schedule: '*/10 * * * *',
      run: async () => `${await purgeIdempotencyKeys(store, clock.now() - ttl)} key(s) purged`,
    },
    {
      name: 'request_logs_prune',
      schedule: '17 * * * *',
      run: async () => `${await core.services.logs.prune(config.logs.retentionMs)} request log line(s) pruned`,
    },
    {
      name: 'retention_prune',
      schedule: config.retention.schedule,
      run: async () =>
        `${describePrune(await core.services.retention.prune())}; ${await core.services.forms.prunePending()} unconfirmed signup contact(s) deleted`,
    },
    {
      name: 'dkim_rotation',
      schedule: config.dkim.schedule,
      run: async () => describeRotation(await advanceRotations(core.deps, failedFor('DKIM rotation step failed'))),
    },
    {
      name: 'blocklist_check',
      schedule: config.blocklists.schedule,
      run: async () => describeBlocklistRun(await checkBlocklists(core.deps, blocklists)),
    },
    {
      name: 'shaping_prune',
      schedule: '37 * * * *',
      run: async () => `${await pruneShapingState(store, clock.now())} old traffic-shaping row(s) deleted`,
    },
    tlsReportJob(config, core),
    {
      name: 'suppressions_prune',
      schedule: '29 * * * *',
      run: async () =>
        `${await core.services.suppressions.pruneExpired()} expired suppression(s) deleted, ${await core.services.unsubscribe.pruneLinks()} old unsubscribe link(s)`,
    },
  ];
}

/** A report POST may take this long in all (RFC 8460 §5.4 names no limit). */
const TLS_REPORT_TIMEOUT_MS = 30_000;

/**
 * The tls_report job (docs/transport-security.md): yesterday's TLS reports (RFC 8460) to the policy
 * domains that ask for them, and the prune of counts and sent rows older than 30 days.
 */
export function tlsReportJob(config: Config, core: Core): Job {
  const { store, clock, logger, resolver } = core.deps;
  const post = tlsReportPost(config, resolver);
  const settings = tlsReportSettings(config);
  return {
    name: 'tls_report',
    schedule: '23 1 * * *',
    run: async () =>
      describeTlsReportRun(
        await sendTlsReports({ store, clock, logger, resolver, post, accept: core.acceptQueue, settings }),
      ),
  };
}

/**
 * §5.4 through the SSRF guard; no redirect is followed. The report host is the recipient domain's,
 * like its MTA-STS policy host: outbound.ca_file is trusted besides webhooks.ca_file.
 */
function tlsReportPost(config: Config, resolver: DnsResolver): TlsReportPost {
  const egress = egressOptions(config, resolver, TLS_REPORT_TIMEOUT_MS);
  const extra = config.outbound.caFile ? readFileSync(config.outbound.caFile, 'utf8') : null;
  const ca = [egress.ca?.toString(), extra].filter((pem) => !!pem).join('\n') || null;
  const opts = { ...egress, ca };
  return async (url, body, headers) => (await guardedRequest(url, { method: 'POST', headers, body }, opts)).status;
}
