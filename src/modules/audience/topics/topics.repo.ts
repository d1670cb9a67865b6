import { projectRowsPage, type Db } from '../../../store/db.js';
import { subscribedByDefault, type TopicDefault } from './default-subscription.js';

export type { TopicDefault } from './default-subscription.js';

export interface Topic {
  id: string;
  projectId: string;
  name: string;
  description: string | null;
  /** stored in the old words (column `default`); `default_subscription` is presented from it */
  default: TopicDefault;
  createdAt: number;
}

type Row = {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  default: string;
  created_at: number | string;
};
const fromRow = (r: Row): Topic => ({
  id: r.id,
  projectId: r.project_id,
  name: r.name,
  description: r.description,
  default: r.default as TopicDefault,
  createdAt: Number(r.created_at),
});

export async function insertTopic(db: Db, t: Topic): Promise<void> {
  await db('topics').insert({
    id: t.id,
    project_id: t.projectId,
    name: t.name,
    description: t.description,
    default: t.default,
    created_at: t.createdAt,
  });
}

export async function topicsOfProject(db: Db, projectId: string): Promise<Topic[]> {
  return ((await db('topics').select('*').where({ project_id: projectId }).orderBy('id', 'desc')) as Row[]).map(
    fromRow,
  );
}

/** One page, newest first (`limit + 1` rows: whether more follow). */
export async function pageOfTopics(
  db: Db,
  projectId: string,
  limit: number,
  before: string | undefined,
): Promise<Topic[]> {
  return (await projectRowsPage<Row>(db, 'topics', projectId, limit, before)).map(fromRow);
}

/** A topic's name and description (its default is kept: contacts' subscriptions depend on it). */
export async function renameTopic(db: Db, id: string, name: string, description: string | null): Promise<void> {
  await db('topics').where({ id }).update({ name, description });
}

export async function deleteTopic(db: Db, id: string): Promise<void> {
  await db('topics').where({ id }).delete();
}

/**
 * Each contact's subscription to each of the project's topics: its own
 * choice, else the topic's default_subscription.
 */
export async function subscriptionsOf(
  db: Db,
  projectId: string,
  contactIds: string[],
): Promise<Map<string, Record<string, boolean>>> {
  const topics = await topicsOfProject(db, projectId);
  const out = new Map(
    contactIds.map((id) => [
      id,
      Object.fromEntries(topics.map((t) => [t.id, subscribedByDefault(t.default)])) as Record<string, boolean>,
    ]),
  );
  if (!contactIds.length || !topics.length) return out;
  const rows = (await db('contact_topics')
    .select('contact_id', 'topic_id', 'subscribed')
    .whereIn('contact_id', contactIds)) as Array<{
    contact_id: string;
    topic_id: string;
    subscribed: number | boolean;
  }>;
  for (const r of rows) {
    const subs = out.get(r.contact_id);
    if (subs && r.topic_id in subs) subs[r.topic_id] = Boolean(r.subscribed);
  }
  return out;
}

export async function setSubscriptions(
  db: Db,
  contactId: string,
  choices: Record<string, boolean>,
  now: number,
): Promise<void> {
  for (const [topicId, subscribed] of Object.entries(choices)) {
    await db('contact_topics')
      .insert({ contact_id: contactId, topic_id: topicId, subscribed, updated_at: now })
      .onConflict(['contact_id', 'topic_id'])
      .merge({ subscribed, updated_at: now });
  }
}
