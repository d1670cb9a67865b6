import { expect } from 'chai';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { waitEmail } from '../helpers/live.js';
import { startMta, type MtaRole } from '../../src/roles/mta.js';
import { silentLogger } from '../../src/log/logger.js';
import { systemClock } from '../../src/lib/time.js';
import { GroupCommit } from '../../src/store/group-commit.js';
import { eventsOfEmail } from '../../src/modules/notifying/events/events.repo.js';

const SIM = 'simulator.posthorn.test';

eachDatabase('queue recovery after a crash (LIFECYCLE: submitting → ambiguous unless DATA never began)', (db) => {
  let api: TestApi;
  let t: Tenant;
  let mta: MtaRole | null = null;
  before(async function () {
    // the API alone: nothing takes the queue until the test starts a worker
    api = await startTestApi(db().store);
    t = await api.tenant();
  });
  after(async function () {
    await mta?.stop();
    await api.stop();
  });

  async function leftSubmitting(dataStarted: boolean): Promise<string> {
    const res = await t.api.post('/v1/emails', {
      from: 'a@example.test',
      to: [`delivered@${SIM}`],
      subject: 's',
      text: 't',
    });
    // what a process killed in the middle of an attempt leaves behind (test mail is simulated as it
    // is stored, and its finished walk keeps no queue row: the row is put back and the outcome undone)
    const { queue_row_id: rowId } = await db()
      .store.knex('email_recipients')
      .where({ email_id: res.body.id })
      .first<{ queue_row_id: string }>('queue_row_id');
    expect(
      await db().store.knex('outbound_queue').where({ email_id: res.body.id }).count({ n: '*' }).first(),
    ).to.deep.equal({ n: 0 });
    await db().store.knex('outbound_queue').insert({
      id: rowId,
      email_id: res.body.id,
      project_id: t.project.id,
      route: '',
      state: 'submitting',
      attempts: 1,
      next_attempt_at: 0,
      lease_owner: 'dead-process',
      lease_until: 0,
      data_started: dataStarted,
      created_at: 0,
      updated_at: 0,
    });
    await db()
      .store.knex('email_recipients')
      .where({ email_id: res.body.id })
      .update({ status: 'queued', details: null });
    await db()
      .store.knex('emails')
      .where({ id: res.body.id })
      .update({ status: 'submitting', attempts: 1, accepted_at: null });
    return res.body.id as string;
  }

  it('sends again what provably never reached DATA, and marks ambiguous what may have', async function () {
    const safe = await leftSubmitting(false);
    const unsure = await leftSubmitting(true);
    mta = await startMta({
      store: db().store,
      writer: new GroupCommit(db().store),
      clock: systemClock,
      logger: silentLogger(),
      testDomain: SIM,
      owner: 'node_recovery_test',
      retryDelaysMs: [1000],
      attemptLive: async () => {
        throw new Error('no live mail in this test');
      },
    });
    const delivered = await waitEmail(t.api, safe, (e) => e.status === 'accepted');
    expect(delivered.recipients[0].status).to.equal('delivered');
    expect(delivered.attempts).to.equal(2);
    const ambiguous = await waitEmail(t.api, unsure, (e) => e.status === 'ambiguous');
    expect(ambiguous.recipients[0].status).to.equal('ambiguous');
    expect(ambiguous.attempts).to.equal(1);
    // said once, in the recovering transaction: the appliance stopped mid-transmission, no host known
    const said = (await eventsOfEmail(db().store.knex, unsure)).filter((e) => e.type === 'email.ambiguous');
    expect(said).to.have.length(1);
    expect(said[0].data.details).to.deep.include({ host: null, stage: 'crash' });
    expect((await eventsOfEmail(db().store.knex, safe)).map((e) => e.type)).to.not.include('email.ambiguous');
  });
});
