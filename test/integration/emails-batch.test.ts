import { expect } from 'chai';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { expectError } from '../helpers/assert.js';
import { addSuppression } from '../../src/modules/sending/suppressions/suppressions.repo.js';

// POST /v1/emails/batch (docs/sending.md): up to 100 emails of POST /v1/emails's rules, all or
// none, in order, under one Idempotency-Key; and POST /v1/emails/{id}/cancel.

const SIM = 'simulator.posthorn.test';
const one = (n: number, extra: Record<string, unknown> = {}) => ({
  from: 'Shop <orders@example.test>',
  to: [`delivered@${SIM}`],
  subject: `Order ${n}`,
  text: `Order ${n} is on its way`,
  ...extra,
});
const later = (ms: number) => new Date(Date.now() + ms).toISOString();

eachDatabase('batch sends and cancel (POST /v1/emails/batch, /v1/emails/{id}/cancel)', (db) => {
  let api: TestApi;
  let t: Tenant;
  before(async function () {
    api = await startTestApi(db().store, {}, { roles: { mta: true } });
    t = await api.tenant();
  });
  after(async function () {
    await api.stop();
  });

  /** how many emails the tenant has */
  const count = async (tenant = t) => (await tenant.api.get('/v1/emails?limit=100')).body.data.length as number;

  it('queues each email and answers them in order, each one readable as a send of its own', async function () {
    const r = await t.api.post('/v1/emails/batch', [one(1), one(2, { tags: { kind: 'receipt' } }), one(3)]);
    expect(r.status, r.text).to.equal(202);
    expect(r.body.object).to.equal('list');
    expect(r.body.data.map((e: { subject: string }) => e.subject)).to.deep.equal(['Order 1', 'Order 2', 'Order 3']);
    const ids = r.body.data.map((e: { id: string }) => e.id);
    expect(new Set(ids).size).to.equal(3);
    const second = (await t.api.get(`/v1/emails/${ids[1]}`)).body;
    expect(second).to.deep.include({ subject: 'Order 2', tags: { kind: 'receipt' } });
  });

  it('refuses the whole batch for one bad email, naming its index and field, and stores none', async function () {
    const before = await count();
    expectError(
      await t.api.post('/v1/emails/batch', [one(1), one(2, { to: ['not an address'] }), one(3)]),
      400,
      'validation_error',
      '[1].to[0]',
    );
    expectError(
      await t.api.post('/v1/emails/batch', [one(1), one(2, { colour: 'blue' })]),
      400,
      'validation_error',
      '[1].colour',
    );
    expectError(
      await t.api.post('/v1/emails/batch', [one(1, { attachments: [{ filename: 'a.txt', content: 'aGk=' }] })]),
      400,
      'validation_error',
      '[0].attachments',
    );
    expectError(await t.api.post('/v1/emails/batch', []), 400, 'validation_error');
    const many = Array.from({ length: 101 }, (_, i) => one(i));
    expectError(await t.api.post('/v1/emails/batch', many), 400, 'validation_error');
    expect(await count()).to.equal(before);
  });

  it('refuses the whole batch when the accept refuses one email (all its recipients suppressed), storing none', async function () {
    const s = await api.tenant();
    await addSuppression(api.deps.store.knex, {
      projectId: s.project.id,
      address: 'gone@example.test',
      reason: 'manual',
      emailId: null,
      createdAt: Date.now(),
    });
    const e = expectError(
      await s.api.post('/v1/emails/batch', [one(1), one(2), one(3, { to: ['gone@example.test'] })]),
      422,
      'recipient_suppressed',
    );
    expect(e.message).to.match(/^\[2\]: /);
    expect(await count(s)).to.equal(0);
  });

  it('answers a retry with the same Idempotency-Key with the same emails, and another body with 409', async function () {
    const key = `batch-${Date.now()}`;
    const body = [one(10), one(11)];
    const first = await t.api.post('/v1/emails/batch', body, { 'idempotency-key': key });
    expect(first.status, first.text).to.equal(202);
    const before = await count();
    const again = await t.api.post('/v1/emails/batch', body, { 'idempotency-key': key });
    expect(again.status).to.equal(202);
    expect(again.body.data.map((e: { id: string }) => e.id)).to.deep.equal(
      first.body.data.map((e: { id: string }) => e.id),
    );
    expect(await count()).to.equal(before);
    expectError(
      await t.api.post('/v1/emails/batch', [one(12)], { 'idempotency-key': key }),
      409,
      'idempotency_conflict',
    );
  });

  it('cancels a scheduled email: cancelled, its recipients too, with email.cancelled; it can then be neither rescheduled nor cancelled again', async function () {
    const e = (await t.api.post('/v1/emails', one(20, { scheduled_at: later(3_600_000) }))).body;
    expect(e.status).to.equal('scheduled');
    const c = await t.api.post(`/v1/emails/${e.id}/cancel`);
    expect(c.status, c.text).to.equal(200);
    expect(c.body).to.deep.include({ id: e.id, status: 'cancelled' });
    const got = (await t.api.get(`/v1/emails/${e.id}`)).body;
    expect(got.status).to.equal('cancelled');
    expect(got.recipients.map((r: { status: string }) => r.status)).to.deep.equal(['cancelled']);
    const events = (await t.api.get(`/v1/emails/${e.id}/events`)).body.data.map((x: { type: string }) => x.type);
    expect(events).to.deep.equal(['email.scheduled', 'email.cancelled']);
    expectError(await t.api.patch(`/v1/emails/${e.id}`, { scheduled_at: later(7_200_000) }), 409, 'not_schedulable');
    expectError(await t.api.post(`/v1/emails/${e.id}/cancel`), 409, 'not_schedulable');
    // the list filters by it
    const cancelled = (await t.api.get('/v1/emails?status=cancelled')).body.data.map((x: { id: string }) => x.id);
    expect(cancelled).to.include(e.id);
  });

  it("refuses to cancel an email that went out (409), and another project's email is not found", async function () {
    const sent = (await t.api.post('/v1/emails', one(30))).body;
    expectError(await t.api.post(`/v1/emails/${sent.id}/cancel`), 409, 'not_schedulable');
    const other = await api.tenant();
    const scheduled = (await t.api.post('/v1/emails', one(31, { scheduled_at: later(3_600_000) }))).body;
    expectError(await other.api.post(`/v1/emails/${scheduled.id}/cancel`), 404, 'not_found');
    expect((await t.api.get(`/v1/emails/${scheduled.id}`)).body.status).to.equal('scheduled');
  });
});
