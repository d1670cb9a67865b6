/** interface §6: the closed list of event types. */
export const EVENT_TYPES = [
  'email.sent',
  'email.delivered',
  'email.bounced',
  'email.complained',
  'email.failed',
  'email.opened',
  'email.clicked',
  'email.delivery_delayed',
  'email.scheduled',
  'email.suppressed',
  'email.received',
  // CONTRACT §5: beyond interface §6, sent only to endpoints that name them
  'email.unsubscribed',
  'domain.blocklisted',
  'domain.delisted',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'broadcast.sent',
  // CONTRACT §7: an email whose outcome is unknown (ambiguous), opt-in like email.received
  'email.ambiguous',
  // CONTRACT §7: a scheduled email cancelled before it went out, opt-in
  'email.cancelled',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** Types an endpoint gets only when it names them (CONTRACT §5, §7). */
const OPT_IN: readonly EventType[] = [
  'email.received',
  'email.ambiguous',
  'email.cancelled',
  'email.unsubscribed',
  'domain.blocklisted',
  'domain.delisted',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'broadcast.sent',
];

/** What an endpoint gets when it names no events (CONTRACT §5): interface §6's email events but email.received. */
export const DEFAULT_SUBSCRIPTION: readonly EventType[] = EVENT_TYPES.filter((t) => !OPT_IN.includes(t));
