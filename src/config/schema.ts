import { Type, type Static } from '@sinclair/typebox';
import { Nullable as NullableOf, StringEnum } from '../lib/schema.js';
import { Duration, Nullable, Port } from './schema-fields.js';
import { BlocklistsSchema, DkimSchema, DnsSchema, OutboundSchema, SmtpSchema } from './mail.schema.js';
import {
  BroadcastsSchema,
  FormsSchema,
  LimitsSchema,
  NetworkSchema,
  ParsingSchema,
  VerifySchema,
  WebhooksSchema,
} from './features.schema.js';

// The one description of the configuration (CONTRACT §2). Every key has its
// default and a description here; docs/CONFIG.md is written from it (npm
// run docs), and the loader validates against it before anything listens.
// The mail path's sections are in mail.schema.ts, the other features' in
// features.schema.ts; storage, the API listener and housekeeping are here.
// The order of the keys below is the order of docs/CONFIG.md.

export const ConfigSchema = Type.Object(
  {
    data_dir: Type.String({
      minLength: 1,
      default: './data',
      description: 'where the SQLite file and stored messages live',
    }),
    database: Type.Object(
      {
        client: StringEnum(['sqlite', 'pg'] as const, { default: 'sqlite', description: '`sqlite` or `pg`' }),
        url: Nullable(Type.String({ minLength: 1 }), '`postgres://…` when `client: pg`'),
      },
      { additionalProperties: false, default: {} },
    ),
    cluster: Type.Object(
      {
        dead_after: Duration(
          '30s',
          'several nodes on one PostgreSQL database: a node whose heartbeat is older than this is dead, and another node releases the mail and webhook deliveries it held (data not started: queued again; started: ambiguous)',
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    http: Type.Object(
      {
        host: Type.String({ minLength: 1, default: '127.0.0.1', description: 'address the API binds' }),
        port: Port(8025, 'port of the API'),
        public_url: NullableOf(Type.String({ format: 'uri' }), {
          default: 'http://localhost:8025',
          description: 'base for tracking links and click redirects; null turns tracking off',
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    smtp: SmtpSchema,
    outbound: OutboundSchema,
    dns: DnsSchema,
    dkim: DkimSchema,
    blocklists: BlocklistsSchema,
    broadcasts: BroadcastsSchema,
    verify: VerifySchema,
    test_domain: Type.String({
      minLength: 1,
      default: 'simulator.posthorn.test',
      description: 'reserved domain of the simulated recipients',
    }),
    webhooks: WebhooksSchema,
    network: NetworkSchema,
    limits: LimitsSchema,
    forms: FormsSchema,
    parsing: ParsingSchema,
    jobs: Type.Object(
      {
        domain_recheck: Type.String({
          minLength: 9,
          default: '*/15 * * * *',
          description: 'cron expression (node-cron) of the DNS re-check of domains',
        }),
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
        schedule: Type.String({
          minLength: 9,
          default: '43 * * * *',
          description: 'cron expression (node-cron; a sixth, leading field counts seconds) of the retention job',
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    dashboard: Type.Object(
      {
        enabled: Type.Boolean({
          default: true,
          description: 'serve the web dashboard at /dashboard on the API listener (sign-in with an API key)',
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    metrics: Type.Object(
      {
        port: Nullable(
          Type.Integer({ minimum: 0, maximum: 65535 }),
          'serve /metrics on a listener of its own at this port (on metrics.host) instead of on the API listener',
        ),
        host: Type.String({
          minLength: 1,
          default: '127.0.0.1',
          description: 'address of the metrics listener when metrics.port is set',
        }),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

export type RawConfig = Static<typeof ConfigSchema>;
