import { iso } from '../../../lib/time.js';
import type { Topic } from './topics.repo.js';
import { defaultSubscriptionOf } from './default-subscription.js';

/**
 * docs/contacts.md: `{object: "topic", id, name, description, default_subscription, default, created_at}`;
 * the deprecated `default` stays beside it, in its old words, for clients written before.
 */
export function presentTopic(t: Topic) {
  return {
    object: 'topic' as const,
    id: t.id,
    name: t.name,
    description: t.description,
    default_subscription: defaultSubscriptionOf(t.default),
    default: t.default,
    created_at: iso(t.createdAt),
  };
}

/** The answer of DELETE /v1/topics/{id}. */
export function presentDeletedTopic(t: Topic) {
  return { object: 'topic' as const, id: t.id, deleted: true };
}
