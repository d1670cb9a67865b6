import { apiError, notFound } from '../../../lib/errors.js';
import { lockRows } from '../../../store/db.js';
import { broadcastUsing } from './list-users.repo.js';
import { newId } from '../../../lib/ids.js';
import { idPage, type Page } from '../../../lib/page.js';
import type { Clock } from '../../../lib/time.js';
import type { Store } from '../../../store/store.js';
import * as repo from './topics.repo.js';
import type { Topic } from './topics.repo.js';
import { requestedDefault, type DefaultSubscription, type TopicDefault } from './default-subscription.js';

// What a future Resend-compatible route maps `defaultSubscription` with (Resend's opt_in is our subscribed).
export {
  fromResendDefaultSubscription,
  toResendDefaultSubscription,
  type DefaultSubscription,
  type ResendDefaultSubscription,
} from './default-subscription.js';

/** POST /v1/topics: `default_subscription`, or the deprecated `default` in its old meaning (one is required). */
export interface NewTopic {
  name: string;
  description?: string | undefined;
  default_subscription?: DefaultSubscription | undefined;
  default?: TopicDefault | undefined;
}

export function topicService(deps: { store: Store; clock: Clock }) {
  const existing = async (projectId: string, id: string): Promise<Topic> => {
    const t = (await repo.topicsOfProject(deps.store.knex, projectId)).find((x) => x.id === id);
    if (!t) throw notFound(`topic ${id}`);
    return t;
  };
  return {
    create: async (projectId: string, body: NewTopic): Promise<Topic> => {
      const t: Topic = {
        id: newId('topic', deps.clock.now()),
        projectId,
        name: body.name,
        description: body.description ?? null,
        default: requestedDefault(body),
        createdAt: deps.clock.now(),
      };
      await deps.store.tx((trx) => repo.insertTopic(trx, t));
      return t;
    },
    list: async (projectId: string, limit: number, cursor: string | undefined): Promise<Page<Topic>> =>
      idPage(await repo.pageOfTopics(deps.store.knex, projectId, limit, cursor), limit),
    get: (projectId: string, id: string) => existing(projectId, id),
    /**
     * PATCH /v1/topics/{id}: its name or description. Its default_subscription stays: changing it
     * would change, silently, who gets the topic's broadcasts.
     */
    update: async (
      projectId: string,
      id: string,
      body: { name?: string | undefined; description?: string | null | undefined },
    ): Promise<Topic> => {
      const t = await existing(projectId, id);
      const next = {
        ...t,
        name: body.name ?? t.name,
        description: body.description === undefined ? t.description : body.description,
      };
      await deps.store.tx((trx) => repo.renameTopic(trx, t.id, next.name, next.description));
      return next;
    },
    /** Deletes the topic and answers what it was. */
    delete: async (projectId: string, id: string): Promise<Topic> => {
      const t = await existing(projectId, id);
      await deps.store.tx(async (trx) => {
        await lockRows(trx, 'projects', [projectId]);
        const broadcast = await broadcastUsing(trx, projectId, { topic: t.id });
        if (broadcast)
          throw apiError(
            'conflict',
            `broadcast ${broadcast.id} (${broadcast.name}) is on the topic ${t.id}; cancel or change it first`,
          );
        await repo.deleteTopic(trx, t.id);
      });
      return t;
    },
  };
}

export type TopicService = ReturnType<typeof topicService>;
