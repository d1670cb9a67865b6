import type { Clock } from '../../../lib/time.js';
import { insertMetaOnce } from '../../../store/meta.js';
import { withinTransaction, type Store } from '../../../store/store.js';
import { findProjectByName } from '../projects/projects.repo.js';
import { createProject } from '../projects/projects.service.js';
import { createKey } from './keys.service.js';

export interface FirstStart {
  projectId: string;
  key: string;
}

const MARK = 'first_start_done';

/**
 * CONTRACT §1: the first start on an empty data directory creates project
 * `default` with a test key holding every scope. A marker row makes every
 * later start a no-op, even if that project is renamed or its key revoked.
 */
export async function firstStart(store: Store, clock: Clock): Promise<FirstStart | null> {
  return store.tx(async (trx) => {
    // The marker is claimed first: of several processes starting together on one PostgreSQL
    // database, the one whose insert wins creates the project; the others wait on its row
    // lock, then find it taken and print nothing.
    if (!(await insertMetaOnce(trx, MARK, new Date(clock.now()).toISOString()))) return null;
    const scoped = { store: withinTransaction(store, trx), clock };
    const project = (await findProjectByName(trx, 'default')) ?? (await createProject(scoped, { name: 'default' }));
    const { secret } = await createKey(scoped, { projectId: project.id, mode: 'test', name: 'first start' });
    return { projectId: project.id, key: secret };
  });
}
