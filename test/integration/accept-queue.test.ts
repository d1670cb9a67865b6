import { expect } from 'chai';
import { eachDatabase } from '../helpers/databases.js';
import { silentLogger } from '../../src/log/logger.js';
import { systemClock } from '../../src/lib/time.js';
import { ApiError } from '../../src/lib/errors.js';
import { AcceptQueue } from '../../src/modules/emails/accept.js';
import { prepareEmail } from '../../src/modules/emails/prepare.js';
import { createProject } from '../../src/modules/projects/projects.service.js';
import type { Project } from '../../src/modules/projects/projects.repo.js';

eachDatabase('the accept group commit', (db) => {
  it('stores the other requests of a batch when one of them cannot be stored', async function () {
    const { store } = db();
    const accept = new AcceptQueue(store, systemClock, silentLogger(), { hostname: 'mta.test', routeOf: () => '' });
    const project = await createProject({ store, clock: systemClock }, { name: `p${Date.now()}` });
    // a project that does not exist: its email violates a foreign key inside the shared transaction
    const ghost: Project = { ...project, id: 'prj_doesnotexist' };
    const request = (p: Project, i: number) => ({
      project: p,
      environment: 'test' as const,
      prepared: prepareEmail({ from: 'a@example.test', to: [`r${i}@example.test`], subject: 's', text: 't' }, Date.now()),
      attachments: [],
      requestId: `req_${i}`,
      idempotencyKey: null,
    });
    // submitted in one turn of the event loop: they share one transaction
    const results = await Promise.allSettled([accept.submit(request(project, 1)), accept.submit(request(ghost, 2)), accept.submit(request(project, 3))]);
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).to.be.instanceOf(ApiError);
    const stored = (await store.knex('emails').where({ project_id: project.id }).select('id')) as Array<{ id: string }>;
    expect(stored.map((r) => r.id).sort()).to.deep.equal([(results[0] as PromiseFulfilledResult<{ id: string }>).value.id, (results[2] as PromiseFulfilledResult<{ id: string }>).value.id].sort());
    expect(await store.knex('emails').where({ project_id: ghost.id })).to.have.length(0);
  });
});
