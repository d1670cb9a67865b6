import { readFileSync, existsSync } from 'node:fs';
import { dirname, isAbsolute, resolve, join } from 'node:path';
import YAML from 'yaml';
import cron from 'node-cron';
import type { RawConfig } from './schema.js';
import { configValidator } from './config-validator.js';
import { parseDuration } from '../lib/duration.js';
import { describeAjvError } from '../lib/ajv-errors.js';
import { PACKAGE_ROOT } from './package-root.js';
import { ConfigError, type Config, type SmtpListenerConfig } from './config.js';
import { applyEnvOverrides } from './env-overrides.js';
import { outboundShaping } from './load-shaping.js';

export const DEFAULT_CONFIG_PATH = join(PACKAGE_ROOT, 'config', 'default.yaml');

const smtpListener = (l: {
  enabled: boolean;
  host: string;
  port: number;
  max_message_mb: number;
  secure?: boolean;
}): SmtpListenerConfig => ({
  enabled: l.enabled,
  host: l.host,
  port: l.port,
  maxMessageBytes: l.max_message_mb * 1024 * 1024,
  ...(l.secure !== undefined ? { secure: l.secure } : {}),
});

export interface LoadOptions {
  /** --config; falls back to POSTHORN_CONFIG, then config/default.yaml */
  path?: string | undefined;
  env?: NodeJS.ProcessEnv;
  /** told about POSTHORN_* variables that are not config overrides and were ignored */
  warn?: (message: string) => void;
}

const validateRaw = configValidator();

export function loadConfig(opts: LoadOptions = {}): Config {
  const env = opts.env ?? process.env;
  const path = resolve(opts.path ?? env.POSTHORN_CONFIG ?? DEFAULT_CONFIG_PATH);
  if (!existsSync(path)) throw new ConfigError(`config file ${path} does not exist`);
  let raw: unknown;
  try {
    // `<<: *anchor` merges as YAML 1.1 does; and a copy without shared parts: an alias
    // (*anchor) gives one object twice, and the defaults filled into one section would
    // otherwise appear in the other
    raw = JSON.parse(JSON.stringify(YAML.parse(readFileSync(path, 'utf8'), { merge: true }) ?? {})) as unknown;
  } catch (e) {
    throw new ConfigError(`config file ${path} is not valid YAML: ${(e as Error).message}`);
  }
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new ConfigError(`config file ${path} must hold a mapping of keys`);
  const sources = applyEnvOverrides(raw as Record<string, unknown>, env, opts.warn);
  return buildConfig(raw as Record<string, unknown>, path, sources);
}

/** The first thing ajv finds wrong with `raw`, as a ConfigError that says where the key came from. */
function assertValid(
  raw: Record<string, unknown>,
  path: string | null,
  sources: Map<string, string>,
): asserts raw is RawConfig {
  if (validateRaw(raw)) return;
  const err = validateRaw.errors![0];
  const { field, message } = describeAjvError(err, 'config');
  const key = field.replace(/\[\d+\]$/, '');
  const origin = sources.get(key) ? ` (from ${sources.get(key)})` : path ? ` (in ${path})` : '';
  if (err.keyword === 'additionalProperties') throw new ConfigError(`unknown config key "${field}"${origin}`);
  throw new ConfigError(`config key "${field}" ${message}${origin}`);
}

/** Validate a config object (already parsed) as if it came from a file in `baseDir`. */
// long: one line per section of the config, read as a table of what each key becomes
export function buildConfig(
  raw: Record<string, unknown>,
  path: string | null,
  sources = new Map<string, string>(),
): Config {
  assertValid(raw, path, sources);
  const c = raw;
  const base = path ? dirname(path) : process.cwd();
  const file = (p: string | null) => (p == null ? null : isAbsolute(p) ? p : resolve(base, p));
  const durations = (list: string[], key: string) =>
    list.map((d, i) => {
      try {
        return parseDuration(d);
      } catch (e) {
        throw new ConfigError(`config key "${key}[${i}]" ${(e as Error).message}`);
      }
    });
  checkCombinations(c);
  const relay = c.outbound.relay;
  return {
    configPath: path,
    dataDir: file(c.data_dir)!,
    database: { client: c.database.client, url: c.database.url },
    http: {
      host: c.http.host,
      port: c.http.port,
      publicUrl: c.http.public_url === null ? null : c.http.public_url.replace(/\/+$/, ''),
    },
    smtp: {
      inbound: smtpListener(c.smtp.inbound),
      submission: smtpListener(c.smtp.submission),
      tls: { key: file(c.smtp.tls.key), cert: file(c.smtp.tls.cert) },
      maxClients: c.smtp.max_clients,
      reverseDns: c.smtp.reverse_dns,
      limits: {
        maxClientsPerIp: c.smtp.max_clients_per_ip,
        sessionTimeoutMs: parseDuration(c.smtp.session_timeout),
        dataTimeoutMs: parseDuration(c.smtp.data_timeout),
        minDataRate: c.smtp.min_data_rate,
        hardErrorLimit: c.smtp.hard_error_limit,
      },
    },
    outbound: {
      hostname: c.outbound.hostname,
      mode: c.outbound.mode,
      mxPort: c.outbound.mx_port,
      relay: relay
        ? {
            host: relay.host ?? null,
            port: relay.port ?? 587,
            secure: relay.secure ?? false,
            user: relay.user ?? null,
            pass: relay.pass ?? null,
          }
        : null,
      retryDelaysMs: durations(c.outbound.retry_schedule, 'outbound.retry_schedule'),
      maxConnectionsPerDomain: c.outbound.max_connections_per_domain,
      mtaSts: c.outbound.mta_sts,
      dane: c.outbound.dane,
      caFile: file(c.outbound.ca_file),
      tlsRpt: {
        enabled: c.outbound.tls_rpt.enabled,
        from: c.outbound.tls_rpt.from,
        organizationName: c.outbound.tls_rpt.organization_name ?? c.outbound.hostname,
        contactInfo: c.outbound.tls_rpt.contact_info ?? `postmaster@${c.outbound.hostname}`,
      },
      ...outboundShaping(c.outbound),
    },
    dns: { resolvers: c.dns.resolvers, zone: c.dns.zone.toLowerCase().replace(/\.$/, ''), server: c.dns.server },
    testDomain: c.test_domain.toLowerCase(),
    dkim: {
      rotateAfterMs: parseDuration(c.dkim.rotate_after),
      retireAfterMs: parseDuration(c.dkim.retire_after),
      keyTtlMs: parseDuration(c.dkim.key_ttl),
      schedule: cronAt('dkim.schedule', c.dkim.schedule),
    },
    blocklists: {
      lists: c.blocklists.lists,
      ips: c.blocklists.ips,
      schedule: cronAt('blocklists.schedule', c.blocklists.schedule),
      queriesPerSecond: c.blocklists.queries_per_second,
    },
    broadcasts: { maxPerSecond: c.broadcasts.max_per_second },
    verify: {
      dnsTimeoutMs: c.verify.dns_timeout_ms,
      cacheTtlMs: c.verify.cache_ttl_s * 1000,
      disposableFile: file(c.verify.disposable_file),
    },
    webhooks: {
      timeoutMs: c.webhooks.timeout_ms,
      attemptDelaysMs: durations(c.webhooks.retry_schedule, 'webhooks.retry_schedule'),
      caFile: file(c.webhooks.ca_file),
      endpointConcurrency: c.webhooks.endpoint_concurrency,
      concurrency: c.webhooks.concurrency,
    },
    network: { allowPrivate: c.network.allow_private },
    limits: {
      requestsPerSecond: c.limits.requests_per_second,
      idempotencyTtlMs: parseDuration(c.limits.idempotency_ttl),
      authFailuresPerIp: c.limits.auth_failures_per_ip,
      authFailureWindowMs: parseDuration(c.limits.auth_failure_window),
    },
    parsing: {
      threads: c.parsing.threads,
      timeBudgetMs: parseDuration(c.parsing.time_budget),
      memoryMb: c.parsing.memory_mb,
    },
    forms: {
      submissionsPerIpPerHour: c.forms.submissions_per_ip_per_hour,
      submissionsPerFormPerMinute: c.forms.submissions_per_form_per_minute,
    },
    jobs: { domainRecheck: cronAt('jobs.domain_recheck', c.jobs.domain_recheck) },
    log: { level: c.log.level },
    logs: { retentionMs: parseDuration(c.logs.retention) },
    cluster: { deadAfterMs: parseDuration(c.cluster.dead_after) },
    retention: { days: c.retention.days, schedule: cronAt('retention.schedule', c.retention.schedule) },
    metrics: { port: c.metrics.port, host: c.metrics.host },
    dashboard: { enabled: c.dashboard.enabled },
  };
}

/** Keys that are valid alone but not together. */
function checkCombinations(c: RawConfig): void {
  if (c.database.client === 'pg' && !c.database.url)
    throw new ConfigError('config key "database.url" is required when database.client is pg');
  if (c.outbound.mode === 'relay' && !c.outbound.relay?.host)
    throw new ConfigError('config key "outbound.relay.host" is required when outbound.mode is relay');
  if (!!c.smtp.tls.key !== !!c.smtp.tls.cert)
    throw new ConfigError('config keys "smtp.tls.key" and "smtp.tls.cert" must be set together');
}

/** A config key's cron expression, once node-cron accepts it. */
function cronAt(key: string, expression: string): string {
  if (!cron.validate(expression))
    throw new ConfigError(`config key "${key}" is not a valid cron expression: "${expression}"`);
  return expression;
}
