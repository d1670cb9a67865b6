import { Type } from '@sinclair/typebox';
import { DURATION_PATTERN } from '../lib/duration.js';
import { Duration, Nullable } from './schema-fields.js';

// The sections of the config schema (schema.ts) for the features beside the
// mail path, and what holds them back: broadcasts, address verification,
// webhooks and the network they may reach, the API's limits, signup forms and
// the workers that parse untrusted input.

export const BroadcastsSchema = Type.Object(
  {
    max_per_second: Type.Number({
      exclusiveMinimum: 0,
      maximum: 10000,
      default: 50,
      description:
        'live broadcast emails handed to the outbound queue per second at most, by each serve process, shared by the broadcasts sending at once (docs/broadcasts.md); test broadcasts are simulated and not held back',
    }),
  },
  { additionalProperties: false, default: {} },
);

export const VerifySchema = Type.Object(
  {
    dns_timeout_ms: Type.Integer({
      minimum: 100,
      maximum: 30000,
      default: 2000,
      description: 'per DNS lookup of address verification; a domain not answered in time is `unknown`',
    }),
    cache_ttl_s: Type.Integer({
      minimum: 0,
      maximum: 86400,
      default: 300,
      description: "how long a domain's mail servers are remembered (0 = not at all)",
    }),
    disposable_file: Nullable(
      Type.String({ minLength: 1 }),
      'operator file of disposable domains: one per line, `!domain` for an exception, `#` comments',
    ),
  },
  { additionalProperties: false, default: {} },
);

export const WebhooksSchema = Type.Object(
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
      description:
        "the most requests in flight to one endpoint: each endpoint's window starts at 4, grows while it answers 2xx within 1 s, halves when it fails",
    }),
    concurrency: Type.Integer({
      minimum: 1,
      maximum: 4096,
      default: 256,
      description: 'the most webhook requests in flight in all',
    }),
  },
  { additionalProperties: false, default: {} },
);

export const NetworkSchema = Type.Object(
  {
    allow_private: Type.Boolean({
      default: false,
      description: 'allow webhook and attachment URLs that resolve to private or loopback addresses (tests only)',
    }),
  },
  { additionalProperties: false, default: {} },
);

export const LimitsSchema = Type.Object(
  {
    requests_per_second: Type.Number({
      exclusiveMinimum: 0,
      default: 50,
      description: 'per API key; 429 `rate_limited` with `Retry-After`',
    }),
    idempotency_ttl: Duration('24h', 'how long an Idempotency-Key is remembered'),
    auth_failures_per_ip: Type.Integer({
      minimum: 1,
      maximum: 100000,
      default: 10,
      description:
        'failed authentications (API bearer, dashboard sign-in, SMTP AUTH) one client address may make per limits.auth_failure_window; past it 429 / 454 with Retry-After (in memory, per process)',
    }),
    auth_failure_window: Duration('15m', 'the window limits.auth_failures_per_ip counts over'),
  },
  { additionalProperties: false, default: {} },
);

export const FormsSchema = Type.Object(
  {
    submissions_per_ip_per_hour: Type.Integer({
      minimum: 1,
      maximum: 100000,
      default: 10,
      description:
        'submissions a signup form takes from one client IP address per hour (in memory, per process; docs/forms.md); past it 429',
    }),
    submissions_per_form_per_minute: Type.Integer({
      minimum: 1,
      maximum: 100000,
      default: 60,
      description:
        'submissions one signup form takes per minute from everyone together (in memory, per process); past it 429',
    }),
  },
  { additionalProperties: false, default: {} },
);

export const ParsingSchema = Type.Object(
  {
    threads: Nullable(
      Type.Integer({ minimum: 1, maximum: 64 }),
      'worker threads that parse untrusted input (inbound MIME, reports, templates); null: one per core',
    ),
    time_budget: Duration(
      '10s',
      'the longest one parse may run on a worker; past it the worker is stopped and the input refused',
    ),
    memory_mb: Type.Integer({
      minimum: 32,
      maximum: 4096,
      default: 256,
      description: 'heap of each parsing worker; an input that needs more is refused',
    }),
  },
  { additionalProperties: false, default: {} },
);
