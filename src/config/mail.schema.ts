import { Type } from '@sinclair/typebox';
import { DURATION_PATTERN } from '../lib/duration.js';
import { StringEnum } from '../lib/schema.js';
import { Duration, Nullable, Port } from './schema-fields.js';
import { outboundShapingFields } from './shaping.schema.js';

// The sections of the config schema (schema.ts) for how mail comes in and goes
// out: the SMTP listeners, outbound delivery, the DNS the appliance resolves
// with and serves, DKIM keys and the blocklists it watches.

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
  host: Type.String({
    minLength: 1,
    default: '0.0.0.0',
    description: `address the ${what} binds (config/default.yaml binds 127.0.0.1; docs/security.md)`,
  }),
  port: Port(port, `port of the ${what}`),
  max_message_mb: Type.Integer({
    minimum: 1,
    maximum: 100,
    default: maxMb,
    description: `largest message the ${what} takes (SIZE), in MB; larger ones get 552`,
  }),
});

export const SmtpSchema = Type.Object(
  {
    inbound: Type.Object(smtpListenerFields(2525, 'MX listener (bounces, complaints, receiving)', 25), {
      additionalProperties: false,
      default: {},
    }),
    submission: Type.Object(
      {
        ...smtpListenerFields(2587, 'SMTP submission listener (API key as password)', 15),
        secure: Type.Boolean({
          default: false,
          description: 'implicit TLS on the submission port (RFC 8314, usually port 465) instead of STARTTLS',
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    max_clients: Type.Integer({
      minimum: 1,
      maximum: 10000,
      default: 200,
      description: 'simultaneous connections each SMTP listener takes',
    }),
    max_clients_per_ip: Type.Integer({
      minimum: 1,
      maximum: 10000,
      default: 20,
      description:
        'simultaneous connections each SMTP listener takes from one client address (an IPv6 client by its /64); past it 421',
    }),
    session_timeout: Duration(
      '30m',
      'the longest an SMTP session may last in all; then 421 and the connection is closed',
    ),
    data_timeout: Duration('10m', 'the longest one DATA transfer may take; then 421 and the connection is closed'),
    min_data_rate: Type.Integer({
      minimum: 0,
      maximum: 100_000_000,
      default: 500,
      description:
        'bytes per second a DATA transfer must average once it has run 30 s, else 421 and close (0: no minimum)',
    }),
    hard_error_limit: Type.Integer({
      minimum: 1,
      maximum: 1000,
      default: 20,
      description:
        'refused recipients, unknown or bad commands one SMTP session may make; then 421 and close (Postfix smtpd_hard_error_limit)',
    }),
    reverse_dns: Type.Boolean({
      default: false,
      description: 'look up the names of SMTP clients (through dns.resolvers, 1.5 s at most); off by default',
    }),
    tls: Type.Object(
      {
        key: Nullable(Type.String({ minLength: 1 }), 'PEM private key; STARTTLS is offered when key and cert are set'),
        cert: Nullable(Type.String({ minLength: 1 }), 'PEM certificate chain'),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false, default: {} },
);

export const OutboundSchema = Type.Object(
  {
    hostname: Type.String({ minLength: 1, default: 'localhost', description: 'EHLO name, Message-ID domain' }),
    mode: StringEnum(['direct', 'relay'] as const, {
      default: 'direct',
      description: "`direct` (to the recipients' MX) or `relay`",
    }),
    mx_port: Port(25, 'port used for MX delivery (tests point it at a sink)'),
    relay: Type.Unsafe<{
      host?: string | null;
      port?: number;
      secure?: boolean;
      user?: string | null;
      pass?: string | null;
    } | null>({
      type: ['object', 'null'],
      additionalProperties: false,
      default: null,
      description: 'upstream SMTP relay for `mode: relay`',
      properties: {
        host: { type: ['string', 'null'], default: null, description: 'relay host' },
        port: { type: 'integer', minimum: 1, maximum: 65535, default: 587, description: 'relay port' },
        secure: {
          type: 'boolean',
          default: false,
          description: 'implicit TLS (port 465); otherwise STARTTLS when offered',
        },
        user: { type: ['string', 'null'], default: null, description: 'relay user' },
        pass: { type: ['string', 'null'], default: null, description: 'relay password (never logged)' },
      },
    }),
    retry_schedule: Type.Array(Type.String({ pattern: DURATION_PATTERN }), {
      default: ['1m', '5m', '15m', '1h', '2h', '4h', '8h', '16h'],
      description: 'delay before each retry after a temporary failure; when they run out the recipient fails',
    }),
    max_connections_per_domain: Type.Integer({
      minimum: 1,
      maximum: 100,
      default: 5,
      description: 'parallel SMTP sessions to one destination of a provider in no table (docs/delivery.md)',
    }),
    mta_sts: Type.Boolean({
      default: true,
      description:
        "apply recipient domains' MTA-STS policies (RFC 8461) in direct mode: enforce means TLS with a valid certificate to a listed MX, else the mail waits (docs/transport-security.md)",
    }),
    dane: Type.Boolean({
      default: true,
      description:
        'check MX certificates against DNSSEC-validated TLSA records (DANE, RFC 7672) in direct mode; needs a validating resolver in dns.resolvers',
    }),
    ca_file: Nullable(
      Type.String({ minLength: 1 }),
      "extra CA trusted for MTA-STS policies and MX certificates (tests, private CAs), and for the relay's certificate",
    ),
    tls_rpt: Type.Object(
      {
        enabled: Type.Boolean({
          default: true,
          description:
            "send each day's TLS reports (RFC 8460) to the policy domains that ask for them in their `_smtp._tls` record (the tls_report job; docs/transport-security.md)",
        }),
        from: Nullable(
          Type.String({ format: 'email', maxLength: 254 }),
          "From of the reports sent by mail, an address on a verified sending domain (the email is created in that domain's project); null: reports to mailto: addresses are not sent",
        ),
        organization_name: Nullable(
          Type.String({ minLength: 1, maxLength: 200 }),
          "the report's organization-name; null: outbound.hostname",
        ),
        contact_info: Nullable(
          Type.String({ format: 'email', maxLength: 254 }),
          "the report's contact-info; null: postmaster@<outbound.hostname>",
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    ...outboundShapingFields,
  },
  { additionalProperties: false, default: {} },
);

export const DnsSchema = Type.Object(
  {
    resolvers: Type.Array(
      Type.String({ pattern: '^(\\[[0-9a-fA-F:.]+\\]|[0-9a-fA-F:.]+|[A-Za-z0-9.-]+)(:[0-9]{1,5})?$' }),
      {
        default: [],
        description: '`host:port` list; empty means the system resolvers',
      },
    ),
    zone: Type.String({
      minLength: 1,
      default: 'dkim.localhost',
      description: 'zone the appliance serves for the DKIM CNAME targets',
    }),
    server: Listener(false, '0.0.0.0', 53, 'built-in authoritative DNS server'),
  },
  { additionalProperties: false, default: {} },
);

export const DkimSchema = Type.Object(
  {
    rotate_after: Duration(
      '180d',
      "a verified domain's DKIM key is replaced this long after it began signing, by the dkim_rotation job (0s: only by `posthorn domain rotate-dkim`)",
    ),
    retire_after: Duration(
      '7d',
      'how long a replaced DKIM key stays published, so that mail signed with it still verifies; then its record is removed',
    ),
    key_ttl: Duration(
      '5m',
      "TTL of the zone's DKIM records; a new key signs only after the zone has served it longer than this and dns.resolvers see it",
    ),
    schedule: Type.String({
      minLength: 9,
      default: '*/10 * * * *',
      description: 'cron expression (node-cron; a sixth, leading field counts seconds) of the dkim_rotation job',
    }),
  },
  { additionalProperties: false, default: {} },
);

export const BlocklistsSchema = Type.Object(
  {
    lists: Nullable(
      Type.Array(
        Type.Object(
          {
            zone: Type.String({ minLength: 1 }),
            kind: StringEnum(['ip', 'domain'] as const),
            name: Type.Optional(Type.String({ minLength: 1 })),
          },
          { additionalProperties: false },
        ),
        { maxItems: 50 },
      ),
      'the DNS blocklists to watch, each `{zone, kind: ip|domain, name?}`; null: the built-in public lists (docs/blocklists.md); [] turns the checks off',
    ),
    ips: Type.Array(Type.String({ minLength: 2 }), {
      default: [],
      maxItems: 64,
      description:
        "the appliance's outbound IP addresses to check; empty: the public addresses outbound.hostname resolves to",
    }),
    schedule: Type.String({
      minLength: 9,
      default: '41 */4 * * *',
      description: 'cron expression (node-cron; a sixth, leading field counts seconds) of the blocklist_check job',
    }),
    queries_per_second: Type.Number({
      exclusiveMinimum: 0,
      maximum: 1000,
      default: 10,
      description: 'blocklist queries started per second at most, through dns.resolvers',
    }),
  },
  { additionalProperties: false, default: {} },
);
