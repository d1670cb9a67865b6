import { expect } from 'chai';
import { DATABASE_KINDS, freshDatabase } from '../helpers/databases.js';
import { migrationSource } from '../../migrations/index.js';
import { createProject } from '../../src/modules/account/projects/projects.service.js';
import { contactService } from '../../src/modules/audience/contacts/contacts.service.js';
import { audienceService } from '../../src/modules/audience/audiences/audiences.service.js';
import { topicService } from '../../src/modules/audience/topics/topics.service.js';
import { systemClock } from '../../src/lib/time.js';

for (const kind of DATABASE_KINDS) {
  describe(`migration 0027 (signup forms) [${kind}]${kind === 'pg' ? ' @pg' : ''}`, function () {
    it('rolls back without losing the contacts, their audiences or their topic choices, and comes back', async function () {
      const db = await freshDatabase(kind);
      try {
        await db.store.migrateLatest();
        const deps = { store: db.store, clock: systemClock };
        const project = await createProject(deps, { name: 'm', approved: true });
        const topic = await topicService(deps).create(project.id, { name: 'News', default: 'opt_in' });
        const contact = (
          await contactService(deps).create(
            project.id,
            { email: 'ann@example.com', topics: { [topic.id]: true } },
            false,
          )
        ).contact;
        const audience = await audienceService(deps).create(project.id, 'Newsletter');
        await audienceService(deps).addContacts(project.id, audience.id, { contact_ids: [contact.id] });
        const { knex } = db.store;
        const rows = async () => ({
          contacts: Number((await knex('contacts').count({ n: '*' }).first())!.n),
          memberships: Number(
            (await knex('audience_contacts').where({ contact_id: contact.id }).count({ n: '*' }).first())!.n,
          ),
          choices: Number(
            (await knex('contact_topics').where({ contact_id: contact.id }).count({ n: '*' }).first())!.n,
          ),
        });
        expect(await rows()).to.deep.equal({ contacts: 1, memberships: 1, choices: 1 });
        // down to before 0027: every later migration, then 0027 itself
        while (await knex.schema.hasTable('forms')) await knex.migrate.down({ migrationSource });
        expect(await knex.schema.hasColumn('contacts', 'pending')).to.equal(false);
        expect(await knex.schema.hasTable('form_submissions')).to.equal(false);
        expect(await rows()).to.deep.equal({ contacts: 1, memberships: 1, choices: 1 });
        await db.store.migrateLatest();
        expect(await knex.schema.hasColumn('contacts', 'pending')).to.equal(true);
        expect(await rows()).to.deep.equal({ contacts: 1, memberships: 1, choices: 1 });
        expect((await contactService(deps).get(project.id, contact.id)).pending).to.equal(false);
      } finally {
        await db.drop();
      }
    });
  });
}
