import { expect } from 'chai';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { storedEmail } from '../helpers/fixtures.js';
import type { Reply } from '../helpers/http.js';

eachDatabase('GET /v1/emails', (db) => {
  let api: TestApi;
  let t: Tenant;
  const ids: string[] = [];
  before(async function () {
    api = await startTestApi(db().store);
    t = await api.tenant();
    for (let i = 0; i < 7; i++) {
      const e = await storedEmail(db().store, t.project.id, { rcpt: [i % 2 ? 'odd@example.test' : 'even@example.test'], status: i === 3 ? 'failed' : 'queued' });
      ids.push(e.id);
    }
  });
  after(async function () {
    await api.stop();
  });

  it('pages newest first with next_cursor until the end', async function () {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: Reply = await t.api.get(`/v1/emails?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).to.equal(200);
      expect(res.body.data.length).to.be.at.most(3);
      seen.push(...res.body.data.map((e: { id: string }) => e.id));
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).to.equal(3);
    expect(seen).to.deep.equal([...ids].reverse());
  });

  it('does not shift pages when newer emails arrive between them', async function () {
    const first = await t.api.get('/v1/emails?limit=2');
    await storedEmail(db().store, t.project.id);
    const second = await t.api.get(`/v1/emails?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.data.map((e: { id: string }) => e.id)).to.deep.equal([ids[4], ids[3]]);
  });

  it('filters by status and by recipient', async function () {
    const failed = await t.api.get('/v1/emails?status=failed');
    expect(failed.body.data.map((e: { id: string }) => e.id)).to.deep.equal([ids[3]]);
    const odd = await t.api.get('/v1/emails?to=ODD@example.test&limit=100');
    expect(odd.body.data.map((e: { id: string }) => e.id)).to.deep.equal([ids[5], ids[3], ids[1]]);
  });

  it('shows an email with its recipients in the interface §2.1 shape', async function () {
    const res = await t.api.get(`/v1/emails/${ids[0]}`);
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ id: ids[0], object: 'email', environment: 'test', simulated: true, status: 'queued', attempts: 0 });
    expect(res.body.recipients).to.deep.equal([{ address: 'even@example.test', kind: 'to', status: 'queued' }]);
    expect(res.body.created_at).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });
});
