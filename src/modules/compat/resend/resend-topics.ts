import { Type, type Static } from '@sinclair/typebox';
import { NoNulString, StringEnum } from '../../../lib/schema.js';
import { iso } from '../../../lib/time.js';
import {
  defaultSubscriptionOf,
  fromResendDefaultSubscription,
  toResendDefaultSubscription,
} from '../../audience/topics/default-subscription.js';
import type { Topic } from '../../audience/topics/topics.repo.js';
import type { NewTopic, TopicService } from '../../audience/topics/topics.service.js';

// Resend's topics. Its `default_subscription` names the state a contact who has not chosen is
// in: `opt_in` = subscribed (gets the topic's broadcasts), `opt_out` = unsubscribed. That is our
// `default_subscription` in other words, mapped in one place (default-subscription.ts); our own
// deprecated `default` uses the same two words the other way round and is never read here.

/** The limits POST /v1/topics takes. */
const TopicName = NoNulString({ minLength: 1, maxLength: 200 });
const TopicDescription = NoNulString({ maxLength: 1000 });

export const ResendTopicBody = Type.Object(
  {
    name: TopicName,
    description: Type.Optional(TopicDescription),
    default_subscription: StringEnum(['opt_in', 'opt_out'] as const, {
      description: "opt_in: a contact who has not chosen gets the topic's broadcasts (our subscribed)",
    }),
  },
  { additionalProperties: true },
);
export type ResendTopicBody = Static<typeof ResendTopicBody>;

/** PATCH /topics/{id}: the SDK sends its whole argument, `id` included. */
export const ResendTopicUpdateBody = Type.Object(
  { id: Type.Optional(Type.String()), name: Type.Optional(TopicName), description: Type.Optional(TopicDescription) },
  { additionalProperties: true },
);
export type ResendTopicUpdateBody = Static<typeof ResendTopicUpdateBody>;

/** Resend's new topic as POST /v1/topics's. */
export const fromResendTopic = (b: ResendTopicBody): NewTopic => ({
  name: b.name,
  description: b.description,
  default_subscription: fromResendDefaultSubscription(b.default_subscription),
});

/** Our topic's default in Resend's words. */
export const resendDefaultOf = (t: Topic) => toResendDefaultSubscription(defaultSubscriptionOf(t.default));

/** GET /topics/{id}, and each of GET /topics. */
export function resendTopic(t: Topic) {
  return {
    object: 'topic' as const,
    id: t.id,
    name: t.name,
    description: t.description,
    default_subscription: resendDefaultOf(t),
    created_at: iso(t.createdAt),
  };
}

/** One of GET /contacts/{x}/topics: the contact's subscription, its own choice or else the topic's default. */
export const resendContactTopic = (t: Topic, subscribed: boolean) => ({
  id: t.id,
  name: t.name,
  description: t.description,
  subscription: subscribed ? ('opt_in' as const) : ('opt_out' as const),
});

/** Every topic of the project (Resend's list of topics has no pages), newest first. */
export async function allTopics(topics: Pick<TopicService, 'list'>, projectId: string): Promise<Topic[]> {
  const out: Topic[] = [];
  let cursor: string | undefined;
  do {
    const page = await topics.list(projectId, 100, cursor);
    out.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return out;
}
