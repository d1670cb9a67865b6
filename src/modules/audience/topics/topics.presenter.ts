import { iso } from '../../../lib/time.js';
import type { Topic } from './topics.repo.js';

/** docs/contacts.md: `{object: "topic", id, name, description, default, created_at}` */
export function presentTopic(t: Topic) {
  return {
    object: 'topic' as const,
    id: t.id,
    name: t.name,
    description: t.description,
    default: t.default,
    created_at: iso(t.createdAt),
  };
}

/** The answer of DELETE /v1/topics/{id}. */
export function presentDeletedTopic(t: Topic) {
  return { object: 'topic' as const, id: t.id, deleted: true };
}
