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
      const e = await storedEmail(db().store, t.project.id, {
        rcpt: [i % 2 ? 'odd@example.test' : 'even@example.test'],
        status: i === 3 ? 'failed' : 'queued',
      });
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

  it('filters by what happened to a recipient, whatever the email’s own status', async function () {
    const u = await api.tenant();
    const made = async (statuses: Array<'delivered' | 'bounced' | 'complained'>) => {
      const e = await storedEmail(db().store, u.project.id, {
        status: 'accepted',
        rcpt: statuses.map((_, i) => `r${i}@example.test`),
      });
      for (const [i, r] of e.recipients.entries())
        await db().store.knex('email_recipients').where({ id: r.id }).update({ status: statuses[i] });
      return e.id;
    };
    const mixed = await made(['delivered', 'bounced']);
    const fine = await made(['delivered']);
    const complained = await made(['complained']);
    const ids = async (q: string) =>
      ((await u.api.get(`/v1/emails?${q}`)).body.data as Array<{ id: string }>).map((e) => e.id);
    expect(await ids('recipient_status=bounced')).to.deep.equal([mixed]);
    expect(await ids('recipient_status=delivered')).to.deep.equal([fine, mixed]);
    expect(await ids('recipient_status=complained&status=accepted')).to.deep.equal([complained]);
    expect(await ids('recipient_status=deferred')).to.deep.equal([]);
    const bad = await u.api.get('/v1/emails?recipient_status=lost');
    expect(bad.status).to.equal(400);
    expect(bad.body.error.field).to.equal('recipient_status');
  });

  it('filters by a tag, exactly, and by creation time', async function () {
    const u = await api.tenant();
    const day = 86_400_000;
    const at = Date.parse('2026-03-10T12:00:00Z');
    const a = await storedEmail(db().store, u.project.id, {
      tags: { kind: 'receipt', note: 'x' },
      createdAt: at - 2 * day,
    });
    const b = await storedEmail(db().store, u.project.id, { tags: { kind: 'Receipt' }, createdAt: at });
    // a value that merely contains the member's text, quotes and all, is not the member
    const c = await storedEmail(db().store, u.project.id, {
      tags: { note: '"kind":"receipt"' },
      createdAt: at + 2 * day,
    });
    const list = async (q: string) =>
      ((await u.api.get(`/v1/emails?${q}`)).body.data as Array<{ id: string }>).map((e) => e.id);
    expect(await list('tag=kind:receipt')).to.deep.equal([a.id]);
    expect(await list('tag=kind:Receipt')).to.deep.equal([b.id]);
    expect(await list(`tag=${encodeURIComponent('note:"kind":"receipt"')}`)).to.deep.equal([c.id]);
    expect(await list('created_after=2026-03-09T00:00:00Z')).to.deep.equal([c.id, b.id]);
    expect(await list('created_after=2026-03-09T00:00:00Z&created_before=2026-03-11T00:00:00Z')).to.deep.equal([b.id]);
    for (const [q, field] of [
      ['tag=kind', 'tag'],
      ['tag=a%20b:c', 'tag'],
      ['created_after=yesterday', 'created_after'],
      ['created_before=2026-13-01T00:00:00Z', 'created_before'],
    ]) {
      const r = await u.api.get(`/v1/emails?${q}`);
      expect(r.status, q).to.equal(400);
      expect(r.body.error).to.include({ code: 'validation_error', field });
    }
  });

  it('shows an email with its recipients in the interface §2.1 shape', async function () {
    const res = await t.api.get(`/v1/emails/${ids[0]}`);
    expect(res.status).to.equal(200);
    expect(res.body).to.include({
      id: ids[0],
      object: 'email',
      environment: 'test',
      simulated: true,
      status: 'queued',
      attempts: 0,
    });
    expect(res.body.recipients).to.deep.equal([{ address: 'even@example.test', kind: 'to', status: 'queued' }]);
    expect(res.body.created_at).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });
});
