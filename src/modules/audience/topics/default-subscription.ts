import { validationError } from '../../../lib/errors.js';

// A topic's default is the subscription of a contact who has not chosen. Posthorn
// first named it `default: opt_in | opt_out` after what the contact must do
// (opt in to get it, opt out to leave it); Resend's `defaultSubscription` and
// SES's `DefaultSubscriptionStatus` use the same two words for the state the
// contact starts in, the opposite. `default_subscription` names the state,
// and the words of both are mapped here, in one place.

export const DEFAULT_SUBSCRIPTIONS = ['subscribed', 'unsubscribed'] as const;
/** The subscription of a contact who has not chosen. */
export type DefaultSubscription = (typeof DEFAULT_SUBSCRIPTIONS)[number];

export const TOPIC_DEFAULTS = ['opt_in', 'opt_out'] as const;
/** The deprecated `default`, as stored: opt_in = only those who subscribed; opt_out = all but those who left. */
export type TopicDefault = (typeof TOPIC_DEFAULTS)[number];

/** Resend's `defaultSubscription` (and SES's OPT_IN / OPT_OUT): the state a contact starts in. */
export type ResendDefaultSubscription = 'opt_in' | 'opt_out';

const FROM_TOPIC_DEFAULT: Record<TopicDefault, DefaultSubscription> = {
  opt_in: 'unsubscribed',
  opt_out: 'subscribed',
};
const TO_TOPIC_DEFAULT: Record<DefaultSubscription, TopicDefault> = {
  subscribed: 'opt_out',
  unsubscribed: 'opt_in',
};
const FROM_RESEND: Record<ResendDefaultSubscription, DefaultSubscription> = {
  opt_in: 'subscribed',
  opt_out: 'unsubscribed',
};
const TO_RESEND: Record<DefaultSubscription, ResendDefaultSubscription> = {
  subscribed: 'opt_in',
  unsubscribed: 'opt_out',
};

export const defaultSubscriptionOf = (d: TopicDefault): DefaultSubscription => FROM_TOPIC_DEFAULT[d];
export const topicDefaultOf = (s: DefaultSubscription): TopicDefault => TO_TOPIC_DEFAULT[s];
/** Whether a contact who has not chosen gets the topic's broadcasts. */
export const subscribedByDefault = (d: TopicDefault): boolean => FROM_TOPIC_DEFAULT[d] === 'subscribed';

/** Resend's `defaultSubscription` → ours: Resend's `opt_in` is `subscribed`. */
export const fromResendDefaultSubscription = (r: ResendDefaultSubscription): DefaultSubscription => FROM_RESEND[r];
/** Ours → Resend's `defaultSubscription`: `subscribed` is Resend's `opt_in`. */
export const toResendDefaultSubscription = (s: DefaultSubscription): ResendDefaultSubscription => TO_RESEND[s];

/**
 * The default a request asks for: `default_subscription`, or the deprecated
 * `default` in its old meaning. Both may be given if they agree; one of them
 * is required, as `default` was (a topic that silently reached everyone, or
 * no one, is what the new name is there to prevent).
 */
export function requestedDefault(body: {
  default?: TopicDefault | undefined;
  default_subscription?: DefaultSubscription | undefined;
}): TopicDefault {
  const alias = body.default;
  const chosen = body.default_subscription;
  if (chosen === undefined && alias === undefined)
    throw validationError(
      'default_subscription',
      "is required: subscribed (a contact who has not chosen gets the topic's broadcasts) or unsubscribed (only contacts who subscribed get them)",
    );
  if (chosen === undefined) return alias!;
  if (alias !== undefined && alias !== topicDefaultOf(chosen))
    throw validationError(
      'default_subscription',
      `is ${chosen}, but the deprecated default ${alias} means ${defaultSubscriptionOf(alias)}: send default_subscription alone`,
    );
  return topicDefaultOf(chosen);
}
