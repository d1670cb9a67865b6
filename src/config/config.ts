// What the rest of the appliance reads of the configuration, once load.ts has
// validated and converted it: camelCase, durations in ms, paths absolute.

/** A config file or variable the appliance cannot run with; the message names the key and where it came from. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export interface ListenerConfig {
  enabled: boolean;
  host: string;
  port: number;
}

export interface SmtpListenerConfig extends ListenerConfig {
  maxMessageBytes: number;
  /** implicit TLS (smtp.submission.secure; RFC 8314) */
  secure?: boolean;
}

/** What every SMTP session is held to (docs/security.md). */
export interface SmtpLimits {
  maxClientsPerIp: number;
  sessionTimeoutMs: number;
  dataTimeoutMs: number;
  /** bytes per second, 0 = none */
  minDataRate: number;
  hardErrorLimit: number;
}

export interface RelayConfig {
  host: string | null;
  port: number;
  secure: boolean;
  user: string | null;
  pass: string | null;
}

export interface ProviderConfig {
  name: string;
  mxSuffixes: string[];
  maxConnections?: number;
  maxMessagesPerMinute?: number | null;
  maxMessagesPerConnection?: number | null;
  warmup?: boolean;
}

export interface BackoffConfig {
  provider: string | null;
  /** a regular expression's source, matched case-insensitively (checked at load) */
  replyPattern: string;
  suspendForMs: number;
}

export interface SourceIpConfig {
  address: string;
  /** the EHLO name said from it (defaults to outbound.hostname) */
  ehlo: string;
  pool: string;
  warmup: boolean;
}

export interface TlsRptConfig {
  enabled: boolean;
  /** the From of reports sent by mail; null: mailto: addresses get none */
  from: string | null;
  /** organization-name (RFC 8460 §4.4); outbound.hostname unless set */
  organizationName: string;
  /** contact-info (§4.4); postmaster@outbound.hostname unless set */
  contactInfo: string;
}

export interface Config {
  configPath: string | null;
  dataDir: string;
  database: { client: 'sqlite' | 'pg'; url: string | null };
  cluster: { deadAfterMs: number };
  http: { host: string; port: number; publicUrl: string | null };
  smtp: {
    inbound: SmtpListenerConfig;
    submission: SmtpListenerConfig;
    tls: { key: string | null; cert: string | null };
    maxClients: number;
    reverseDns: boolean;
    limits: SmtpLimits;
  };
  outbound: {
    hostname: string;
    mode: 'direct' | 'relay';
    mxPort: number;
    relay: RelayConfig | null;
    /** outbound.retry_schedule: [n - 1] is the wait after the n-th attempt failed for now (the first attempt is at once) */
    retryDelaysMs: number[];
    maxConnectionsPerDomain: number;
    /** outbound.mta_sts: apply recipient domains' MTA-STS policies (RFC 8461) in direct mode */
    mtaSts: boolean;
    /** outbound.dane: check MX certificates against DNSSEC-validated TLSA records (RFC 7672) */
    dane: boolean;
    /** outbound.ca_file: an extra CA (PEM file) for MTA-STS policy hosts, MX certificates and the relay */
    caFile: string | null;
    /** outbound.tls_rpt: the daily TLS reports (RFC 8460), defaults filled in */
    tlsRpt: TlsRptConfig;
    /** traffic shaping in direct mode (mta/shaping); false: connections per destination only */
    shaping: boolean;
    /** added to the built-in provider table (mta/shaping), replacing entries of the same name */
    providers: ProviderConfig[];
    /** checked before the built-in backoff rules */
    backoff: BackoffConfig[];
    /** source addresses; empty: the system picks one */
    ips: SourceIpConfig[];
    bulkPool: string | null;
    /** messages per day and large provider a warming IP may send, by day */
    warmupSchedule: number[];
  };
  dns: { resolvers: string[]; zone: string; server: ListenerConfig };
  testDomain: string;
  dkim: { rotateAfterMs: number; retireAfterMs: number; keyTtlMs: number; schedule: string };
  blocklists: {
    lists: Array<{ zone: string; kind: 'ip' | 'domain'; name?: string }> | null;
    ips: string[];
    schedule: string;
    queriesPerSecond: number;
  };
  broadcasts: { maxPerSecond: number };
  verify: { dnsTimeoutMs: number; cacheTtlMs: number; disposableFile: string | null };
  webhooks: {
    timeoutMs: number;
    /** webhooks.retry_schedule: [n] is the wait before attempt n + 1, the first included ([0] = 0s: at once) */
    attemptDelaysMs: number[];
    caFile: string | null;
    endpointConcurrency: number;
    concurrency: number;
  };
  network: { allowPrivate: boolean };
  limits: {
    requestsPerSecond: number;
    idempotencyTtlMs: number;
    authFailuresPerIp: number;
    authFailureWindowMs: number;
  };
  /** the worker pool for untrusted input; threads null = one per core */
  parsing: { threads: number | null; timeBudgetMs: number; memoryMb: number };
  forms: { submissionsPerIpPerHour: number; submissionsPerFormPerMinute: number };
  jobs: { domainRecheck: string };
  log: { level: string };
  logs: { retentionMs: number };
  retention: { days: number; schedule: string };
  metrics: { port: number | null; host: string };
  dashboard: { enabled: boolean };
}
