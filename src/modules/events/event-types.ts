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
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** What an endpoint gets when it names no events (CONTRACT §5): everything but email.received. */
export const DEFAULT_SUBSCRIPTION: readonly EventType[] = EVENT_TYPES.filter((t) => t !== 'email.received');
