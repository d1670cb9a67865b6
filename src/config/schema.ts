import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { DURATION_PATTERN } from '../lib/duration.js';
import { Nullable as NullableOf, StringEnum } from '../lib/schema.js';

// The one description of the configuration (CONTRACT §2). Every key has its
// default and a description here; docs/CONFIG.md is written from it (npm
// run docs), and the loader validates against it before anything listens.

const Nullable = <T extends TSchema>(schema: T, description: string) => NullableOf(schema, { default: null, description });

const Duration = (def: string, description: string) =>
  Type.String({ pattern: DURATION_PATTERN, default: def, description });

const Port = (def: number, description: string) =>
  Type.Integer({ minimum: 0, maximum: 65535, default: def, description });

const Listener = (enabled: boolean, host: string, port: number, what: string) =>
  Type.Object(
    {
      enabled: Type.Boolean({ default: enabled, description: `run the ${what}` }),
      host: Type.String({ minLength: 1, default: host, description: `address the ${what} binds` }),
      port: Port(port, `port of the ${what}`),
    },
    { additionalProperties: false, default: {} },
  );

const smtpListenerFields = (port: number, what: string, maxMb: number) => ({
  enabled: Type.Boolean({ default: true, description: `run the ${what}` }),
  host: Type.String({ minLength: 1, default: '0.0.0.0', description: `address the ${what} binds (config/default.yaml binds 127.0.0.1; docs/security.md)` }),
  port: Port(port, `port of the ${what}`),
  max_message_mb: Type.Integer({ minimum: 1, maximum: 100, default: maxMb, description: `largest message the ${what} takes (SIZE), in MB; larger ones get 552` }),
});

export const ConfigSchema = Type.Object(
  {
    data_dir: Type.String({ minLength: 1, default: './data', description: 'where the SQLite file and stored messages live' }),
    database: Type.Object(
      {
        client: StringEnum(['sqlite', 'pg'] as const, { default: 'sqlite', description: '`sqlite` or `pg`' }),
        url: Nullable(Type.String({ minLength: 1 }), '`postgres://…` when `client: pg`'),
      },
      { additionalProperties: false, default: {} },
    ),
    http: Type.Object(
      {
        host: Type.String({ minLength: 1, default: '127.0.0.1', description: 'address the API binds' }),
        port: Port(8025, 'port of the API'),
        public_url: NullableOf(Type.String({ format: 'uri' }), { default: 'http://localhost:8025', description: 'base for tracking links and click redirects; null turns tracking off' }),
      },
      { additionalProperties: false, default: {} },
    ),
    smtp: Type.Object(
      {
        inbound: Type.Object(smtpListenerFields(2525, 'MX listener (bounces, complaints, receiving)', 25), { additionalProperties: false, default: {} }),
        submission: Type.Object(
          {
            ...smtpListenerFields(2587, 'SMTP submission listener (API key as password)', 15),
            secure: Type.Boolean({ default: false, description: 'implicit TLS on the submission port (RFC 8314, usually port 465) instead of STARTTLS' }),
          },
          { additionalProperties: false, default: {} },
        ),
        max_clients: Type.Integer({ minimum: 1, maximum: 10000, default: 200, description: 'simultaneous connections each SMTP listener takes' }),
        max_clients_per_ip: Type.Integer({ minimum: 1, maximum: 10000, default: 20, description: 'simultaneous connections each SMTP listener takes from one client address (an IPv6 client by its /64); past it 421' }),
        session_timeout: Duration('30m', 'the longest an SMTP session may last in all; then 421 and the connection is closed'),
        data_timeout: Duration('10m', 'the longest one DATA transfer may take; then 421 and the connection is closed'),
        min_data_rate: Type.Integer({ minimum: 0, maximum: 100_000_000, default: 500, description: 'bytes per second a DATA transfer must average once it has run 30 s, else 421 and close (0: no minimum)' }),
        hard_error_limit: Type.Integer({ minimum: 1, maximum: 1000, default: 20, description: 'refused recipients, unknown or bad commands one SMTP session may make; then 421 and close (Postfix smtpd_hard_error_limit)' }),
        reverse_dns: Type.Boolean({ default: false, description: 'look up the names of SMTP clients (through dns.resolvers, 1.5 s at most); off by default' }),
        tls: Type.Object(
          {
            key: Nullable(Type.String({ minLength: 1 }), 'PEM private key; STARTTLS is offered when key and cert are set'),
            cert: Nullable(Type.String({ minLength: 1 }), 'PEM certificate chain'),
          },
          { additionalProperties: false, default: {} },
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    outbound: Type.Object(
      {
        hostname: Type.String({ minLength: 1, default: 'localhost', description: 'EHLO name, Message-ID domain' }),
        mode: StringEnum(['direct', 'relay'] as const, { default: 'direct', description: '`direct` (to the recipients\' MX) or `relay`' }),
        mx_port: Port(25, 'port used for MX delivery (tests point it at a sink)'),
        relay: Type.Unsafe<{ host?: string | null; port?: number; secure?: boolean; user?: string | null; pass?: string | null } | null>({
          type: ['object', 'null'],
          additionalProperties: false,
          default: null,
          description: 'upstream SMTP relay for `mode: relay`',
          properties: {
            host: { type: ['string', 'null'], default: null, description: 'relay host' },
            port: { type: 'integer', minimum: 1, maximum: 65535, default: 587, description: 'relay port' },
            secure: { type: 'boolean', default: false, description: 'implicit TLS (port 465); otherwise STARTTLS when offered' },
            user: { type: ['string', 'null'], default: null, description: 'relay user' },
            pass: { type: ['string', 'null'], default: null, description: 'relay password (never logged)' },
          },
        }),
        retry_schedule: Type.Array(Type.String({ pattern: DURATION_PATTERN }), {
          default: ['1m', '5m', '15m', '1h', '2h', '4h', '8h', '16h'],
          description: 'delay before each retry after a temporary failure; when they run out the recipient fails',
        }),
        max_connections_per_domain: Type.Integer({ minimum: 1, maximum: 100, default: 5, description: 'parallel SMTP sessions to one destination' }),
      },
      { additionalProperties: false, default: {} },
    ),
    dns: Type.Object(
      {
        resolvers: Type.Array(Type.String({ pattern: '^(\\[[0-9a-fA-F:.]+\\]|[0-9a-fA-F:.]+|[A-Za-z0-9.-]+)(:[0-9]{1,5})?$' }), {
          default: [],
          description: '`host:port` list; empty means the system resolvers',
        }),
        zone: Type.String({ minLength: 1, default: 'dkim.localhost', description: 'zone the appliance serves for the DKIM CNAME targets' }),
        server: Listener(false, '0.0.0.0', 53, 'built-in authoritative DNS server'),
      },
      { additionalProperties: false, default: {} },
    ),
    dkim: Type.Object(
      {
        rotate_after: Duration('180d', "a verified domain's DKIM key is replaced this long after it began signing, by the dkim_rotation job (0s: only by `posthorn domain rotate-dkim`)"),
        retire_after: Duration('7d', 'how long a replaced DKIM key stays published, so that mail signed with it still verifies; then its record is removed'),
        key_ttl: Duration('5m', "TTL of the zone's DKIM records; a new key signs only after the zone has served it longer than this and dns.resolvers see it"),
        schedule: Type.String({ minLength: 9, default: '*/10 * * * *', description: 'cron expression (node-cron; a sixth, leading field counts seconds) of the dkim_rotation job' }),
      },
      { additionalProperties: false, default: {} },
    ),
    blocklists: Type.Object(
      {
        lists: Nullable(
          Type.Array(Type.Object({ zone: Type.String({ minLength: 1 }), kind: StringEnum(['ip', 'domain'] as const), name: Type.Optional(Type.String({ minLength: 1 })) }, { additionalProperties: false }), { maxItems: 50 }),
          'the DNS blocklists to watch, each `{zone, kind: ip|domain, name?}`; null: the built-in public lists (docs/blocklists.md); [] turns the checks off',
        ),
        ips: Type.Array(Type.String({ minLength: 2 }), { default: [], maxItems: 64, description: "the appliance's outbound IP addresses to check; empty: the public addresses outbound.hostname resolves to" }),
        schedule: Type.String({ minLength: 9, default: '41 */4 * * *', description: 'cron expression (node-cron; a sixth, leading field counts seconds) of the blocklist_check job' }),
        queries_per_second: Type.Number({ exclusiveMinimum: 0, maximum: 1000, default: 10, description: 'blocklist queries started per second at most, through dns.resolvers' }),
      },
      { additionalProperties: false, default: {} },
    ),
    broadcasts: Type.Object(
      {
        max_per_second: Type.Number({
          exclusiveMinimum: 0,
          maximum: 10000,
          default: 50,
          description: "live broadcast emails handed to the outbound queue per second at most, by each serve process, shared by the broadcasts sending at once (docs/broadcasts.md); test broadcasts are simulated and not held back",
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    verify: Type.Object(
      {
        dns_timeout_ms: Type.Integer({ minimum: 100, maximum: 30000, default: 2000, description: 'per DNS lookup of address verification; a domain not answered in time is `unknown`' }),
        cache_ttl_s: Type.Integer({ minimum: 0, maximum: 86400, default: 300, description: 'how long a domain\'s mail servers are remembered (0 = not at all)' }),
        disposable_file: Nullable(Type.String({ minLength: 1 }), 'operator file of disposable domains: one per line, `!domain` for an exception, `#` comments'),
      },
      { additionalProperties: false, default: {} },
    ),
    test_domain: Type.String({ minLength: 1, default: 'simulator.posthorn.test', description: 'reserved domain of the simulated recipients' }),
    webhooks: Type.Object(
      {
        timeout_ms: Type.Integer({ minimum: 1, default: 10000, description: 'per delivery attempt' }),
        retry_schedule: Type.Array(Type.String({ pattern: DURATION_PATTERN }), {
          minItems: 1,
          maxItems: 8,
          default: ['0s', '5s', '5m', '30m', '2h', '5h', '10h', '10h'],
          description: 'delay before each of the (at most 8) attempts',
        }),
        ca_file: Nullable(Type.String({ minLength: 1 }), 'extra CA bundle trusted for HTTPS endpoints'),
        endpoint_concurrency: Type.Integer({
          minimum: 1,
          maximum: 1024,
          default: 64,
          description: "the most requests in flight to one endpoint: each endpoint's window starts at 4, grows while it answers 2xx within 1 s, halves when it fails",
        }),
        concurrency: Type.Integer({ minimum: 1, maximum: 4096, default: 256, description: 'the most webhook requests in flight in all' }),
      },
      { additionalProperties: false, default: {} },
    ),
    network: Type.Object(
      {
        allow_private: Type.Boolean({ default: false, description: 'allow webhook and attachment URLs that resolve to private or loopback addresses (tests only)' }),
      },
      { additionalProperties: false, default: {} },
    ),
    limits: Type.Object(
      {
        requests_per_second: Type.Number({ exclusiveMinimum: 0, default: 50, description: 'per API key; 429 `rate_limited` with `Retry-After`' }),
        idempotency_ttl: Duration('24h', 'how long an Idempotency-Key is remembered'),
        auth_failures_per_ip: Type.Integer({
          minimum: 1,
          maximum: 100000,
          default: 10,
          description: 'failed authentications (API bearer, dashboard sign-in, SMTP AUTH) one client address may make per limits.auth_failure_window; past it 429 / 454 with Retry-After (in memory, per process)',
        }),
        auth_failure_window: Duration('15m', 'the window limits.auth_failures_per_ip counts over'),
      },
      { additionalProperties: false, default: {} },
    ),
    forms: Type.Object(
      {
        submissions_per_ip_per_hour: Type.Integer({ minimum: 1, maximum: 100000, default: 10, description: 'submissions a signup form takes from one client IP address per hour (in memory, per process; docs/forms.md); past it 429' }),
        submissions_per_form_per_minute: Type.Integer({ minimum: 1, maximum: 100000, default: 60, description: 'submissions one signup form takes per minute from everyone together (in memory, per process); past it 429' }),
      },
      { additionalProperties: false, default: {} },
    ),
    parsing: Type.Object(
      {
        threads: Nullable(Type.Integer({ minimum: 1, maximum: 64 }), 'worker threads that parse untrusted input (inbound MIME, reports, templates); null: one per core'),
        time_budget: Duration('10s', 'the longest one parse may run on a worker; past it the worker is stopped and the input refused'),
        memory_mb: Type.Integer({ minimum: 32, maximum: 4096, default: 256, description: "heap of each parsing worker; an input that needs more is refused" }),
      },
      { additionalProperties: false, default: {} },
    ),
    jobs: Type.Object(
      {
        domain_recheck: Type.String({ minLength: 9, default: '*/15 * * * *', description: 'cron expression (node-cron) of the DNS re-check of domains' }),
      },
      { additionalProperties: false, default: {} },
    ),
    log: Type.Object(
      {
        level: StringEnum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, {
          default: 'info',
          description: 'log level: `fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`',
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    logs: Type.Object(
      {
        retention: Duration('14d', 'how long GET /v1/logs keeps a request (a job prunes older ones every hour)'),
      },
      { additionalProperties: false, default: {} },
    ),
    retention: Type.Object(
      {
        days: Type.Integer({
          minimum: 0,
          maximum: 36500,
          default: 30,
          description:
            'emails whose every recipient reached a final state (delivered, bounced, complained, failed, suppressed) and unchanged for this many days are deleted with their events and webhook deliveries, and inbound emails as old; 0 keeps everything for ever',
        }),
        schedule: Type.String({ minLength: 9, default: '43 * * * *', description: 'cron expression (node-cron; a sixth, leading field counts seconds) of the retention job' }),
      },
      { additionalProperties: false, default: {} },
    ),
    dashboard: Type.Object(
      {
        enabled: Type.Boolean({ default: true, description: 'serve the web dashboard at /dashboard on the API listener (sign-in with an API key)' }),
      },
      { additionalProperties: false, default: {} },
    ),
    metrics: Type.Object(
      {
        port: Nullable(Type.Integer({ minimum: 0, maximum: 65535 }), 'serve /metrics on a listener of its own at this port (on metrics.host) instead of on the API listener'),
        host: Type.String({ minLength: 1, default: '127.0.0.1', description: 'address of the metrics listener when metrics.port is set' }),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

export type RawConfig = Static<typeof ConfigSchema>;
