import { Type } from '@sinclair/typebox';
import { DURATION_PATTERN } from '../lib/duration.js';
import { Nullable } from './schema-fields.js';

// The outbound section's keys for traffic shaping (docs/delivery.md): the
// providers mail is grouped by, the replies that suspend one, the source IP
// addresses and their pools, and the warm-up schedule of new addresses.

const PerMinute = Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000 }), Type.Null()]);

const Provider = Type.Object(
  {
    name: Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,62}$' }),
    mx_suffixes: Type.Array(Type.String({ pattern: '^\\.?[A-Za-z0-9.-]+$', maxLength: 253 }), {
      minItems: 1,
      maxItems: 100,
    }),
    max_connections: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    max_messages_per_minute: Type.Optional(PerMinute),
    max_messages_per_connection: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1, maximum: 100_000 }), Type.Null()]),
    ),
    warmup: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const Backoff = Type.Object(
  {
    provider: Type.Optional(Type.String({ minLength: 1 })),
    reply_pattern: Type.String({ minLength: 1, maxLength: 500 }),
    suspend_for: Type.String({ pattern: DURATION_PATTERN }),
  },
  { additionalProperties: false },
);

const SourceIp = Type.Object(
  {
    address: Type.String({ minLength: 2, maxLength: 45 }),
    ehlo: Type.Optional(Type.String({ minLength: 1, maxLength: 253 })),
    pool: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$' })),
    warmup: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const outboundShapingFields = {
  shaping: Type.Boolean({
    default: true,
    description:
      'traffic shaping toward mailbox providers in direct mode (providers, backoff, pools, warm-up; docs/delivery.md); false: only max_connections_per_domain per destination',
  }),
  providers: Type.Array(Provider, {
    default: [],
    maxItems: 500,
    description:
      'mailbox providers `{name, mx_suffixes, max_connections, max_messages_per_minute, max_messages_per_connection, warmup}` added to the built-in table (one of the same name replaces its entry; docs/delivery.md)',
  }),
  backoff: Type.Array(Backoff, {
    default: [],
    maxItems: 500,
    description:
      'rules `{provider?, reply_pattern, suspend_for}` checked before the built-in ones: a reply matching `reply_pattern` (a regular expression, case-insensitive) suspends that provider on that source IP for `suspend_for`',
  }),
  ips: Type.Array(SourceIp, {
    default: [],
    maxItems: 256,
    description:
      'source IP addresses `{address, ehlo, pool, warmup}` outbound mail leaves from; empty: the system picks the address, EHLO is outbound.hostname',
  }),
  bulk_pool: Nullable(
    Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$' }),
    "the pool of outbound.ips broadcasts leave from; null: the same pool as the project's transactional mail",
  ),
  warmup_schedule: Type.Array(Type.Integer({ minimum: 1, maximum: 100_000_000 }), {
    default: [50, 100, 200, 400, 800, 1500, 2500, 4000, 6000, 9000, 13000, 18000, 25000, 35000, 50000, 70000, 100000],
    minItems: 1,
    maxItems: 365,
    description:
      'messages per day a warming IP (outbound.ips[].warmup) may send to each large provider: [0] on its first day, [n] on day n + 1; after the last day no cap',
  }),
};
