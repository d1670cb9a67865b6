import { expect } from 'chai';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { expectError } from '../helpers/assert.js';
import { waitFor } from '../helpers/wait.js';
import { buildCore, buildFanOut } from '../../src/core.js';
import { silentLogger } from '../../src/log/logger.js';

const content = {
  from: 'News <news@example.com>',
  subject: 'Hello {{contact.first_name | there}}',
  html: '<p>Hi {{contact.first_name | there}}, you are on {{contact.plan}}.</p><p><a href="{{preferences_url}}">Preferences</a></p>',
};

eachDatabase('broadcasts: drafts, sending, counts (issue 27)', (db) => {
  let api: TestApi;
  let t: Tenant;
  let audience: string;
  before(async function () {
    api = await startTestApi(db().store, { http: { public_url: 'https://mail.bro.test' } }, { roles: { jobs: true } });
    t = await api.tenant();
    expect(
      (await t.api.post('/v1/contact-properties', { key: 'plan', type: 'string', fallback: 'free' })).status,
    ).to.equal(201);
    audience = (await t.api.post('/v1/audiences', { name: 'Readers' })).body.id;
  });
  after(async function () {
    await api.stop();
  });

  const contact = async (email: string, extra: Record<string, unknown> = {}, audienceId = audience) => {
    const res = await t.api.post('/v1/contacts', { email, ...extra });
    expect(res.status, res.text).to.equal(201);
    expect(
      (await t.api.post(`/v1/audiences/${audienceId}/contacts`, { contact_ids: [res.body.id] })).status,
    ).to.be.oneOf([200, 201]);
    return res.body.id as string;
  };
  const sent = async (id: string) =>
    waitFor(
      async () => {
        const b = (await t.api.get(`/v1/broadcasts/${id}`)).body;
        return b.status === 'sent' ? b : null;
      },
      20_000,
      `broadcast ${id} sent`,
    );
  const emailsOf = async (broadcastId: string) =>
    (await db()
      .store.knex('emails')
      .select('id', 'to_list', 'subject', 'body_html', 'headers', 'contact_id', 'environment')
      .where({ broadcast_id: broadcastId })
      .orderBy('contact_id')) as Array<{
      id: string;
      to_list: string;
      subject: string;
      body_html: string;
      headers: string;
      contact_id: string;
      environment: string;
    }>;

  it('makes drafts and refuses what a send of them would refuse, each error naming its field', async function () {
    const res = await t.api.post('/v1/broadcasts', {
      name: 'November news',
      ...content,
      audience_id: audience,
      tags: { kind: 'news' },
    });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.include({
      object: 'broadcast',
      name: 'November news',
      status: 'draft',
      from: content.from,
      subject: content.subject,
      audience_id: audience,
      segment_id: null,
      topic_id: null,
      environment: null,
    });
    expect(res.body.id).to.match(/^bro_[0-9a-z]{26}$/);
    expect(res.body.counts).to.deep.equal({
      recipients: 0,
      sent: 0,
      delivered: 0,
      bounced: 0,
      complained: 0,
      opened: 0,
      clicked: 0,
      unsubscribed: 0,
      suppressed: 0,
      skipped: 0,
      failed: 0,
      withdrawn: 0,
    });

    const base = { name: 'x', ...content, audience_id: audience };
    expectError(
      await t.api.post('/v1/broadcasts', { ...base, audience_id: undefined }),
      400,
      'validation_error',
      'audience_id',
    );
    expectError(
      await t.api.post('/v1/broadcasts', { ...base, from: 'not an address' }),
      400,
      'validation_error',
      'from',
    );
    expectError(
      await t.api.post('/v1/broadcasts', { ...base, html: '<p>{{#if contact.plan}}open</p>' }),
      400,
      'validation_error',
      'html',
    );
    expectError(
      await t.api.post('/v1/broadcasts', { ...base, subject: 'Hi {{ name }}' }),
      400,
      'validation_error',
      'subject',
    );
    expectError(
      await t.api.post('/v1/broadcasts', { ...base, template_id: 'welcome' }),
      400,
      'validation_error',
      'template_id',
    );
    expectError(
      await t.api.post('/v1/broadcasts', {
        name: 'x',
        from: content.from,
        audience_id: audience,
        template_id: 'no-such-template',
      }),
      400,
      'validation_error',
      'template_id',
    );
    expectError(
      await t.api.post('/v1/broadcasts', { ...base, audience_id: 'aud_00000000000000000000000000' }),
      404,
      'not_found',
    );
    expectError(
      await t.api.post('/v1/broadcasts', { ...base, topic_id: 'top_00000000000000000000000000' }),
      404,
      'not_found',
    );
    expectError(await t.api.post('/v1/broadcasts', { ...base, colour: 'red' }), 400, 'validation_error', 'colour');

    const patched = await t.api.patch(`/v1/broadcasts/${res.body.id}`, {
      subject: 'Our November news',
      tags: { kind: 'digest' },
    });
    expect(patched.status, patched.text).to.equal(200);
    expect(patched.body).to.include({ subject: 'Our November news', html: content.html });
    expect(patched.body.tags).to.deep.equal({ kind: 'digest' });
    expectError(
      await t.api.patch(`/v1/broadcasts/${res.body.id}`, { html: null, text: null }),
      400,
      'validation_error',
      'html',
    );
    expect((await t.api.delete(`/v1/broadcasts/${res.body.id}`)).body).to.deep.equal({
      object: 'broadcast',
      id: res.body.id,
      deleted: true,
    });
    expectError(await t.api.get(`/v1/broadcasts/${res.body.id}`), 404, 'not_found');
  });

  it('refuses a NUL (U+0000) in every text a draft stores, naming the field, and stores nothing (PostgreSQL text cannot hold one)', async function () {
    const nul = 'a\u0000b';
    const base = { name: 'NUL', ...content, audience_id: audience };
    const before = (await t.api.get('/v1/broadcasts?limit=100')).body.data.length;
    const fields: Array<[Record<string, unknown>, string]> = [
      [{ name: nul }, 'name'],
      [{ from: `News <news@example.com>${nul}` }, 'from'],
      [{ reply_to: ['help@example.com', `x${nul}@example.com`] }, 'reply_to[1]'],
      [{ subject: nul }, 'subject'],
      [{ html: `<p>${nul}</p>` }, 'html'],
      [{ text: nul }, 'text'],
      [{ tags: { kind: nul } }, 'tags.kind'],
    ];
    for (const [field, name] of fields)
      expectError(await t.api.post('/v1/broadcasts', { ...base, ...field }), 400, 'validation_error', name);
    expect((await t.api.get('/v1/broadcasts?limit=100')).body.data.length, 'nothing stored').to.equal(before);

    const draft = await t.api.post('/v1/broadcasts', { ...base, text: 'plain' });
    expect(draft.status, draft.text).to.equal(201);
    for (const [field, name] of fields)
      expectError(await t.api.patch(`/v1/broadcasts/${draft.body.id}`, field), 400, 'validation_error', name);
    const kept = (await t.api.get(`/v1/broadcasts/${draft.body.id}`)).body;
    expect(kept).to.include({
      name: 'NUL',
      from: content.from,
      subject: content.subject,
      html: content.html,
      text: 'plain',
    });
    expect(kept.reply_to).to.equal(null);
    expect(kept.tags).to.deep.equal({});
  });

  it('lists newest first by cursor, and keeps projects apart and keys to their scopes', async function () {
    const ids: string[] = [];
    for (const n of [1, 2, 3])
      ids.push((await t.api.post('/v1/broadcasts', { name: `b${n}`, ...content, audience_id: audience })).body.id);
    const first = await t.api.get('/v1/broadcasts?limit=2');
    expect(first.body.data.map((b: { id: string }) => b.id)).to.deep.equal([ids[2], ids[1]]);
    const second = await t.api.get(`/v1/broadcasts?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.data[0].id).to.equal(ids[0]);
    expectError(await t.api.get('/v1/broadcasts?cursor=nope'), 400, 'validation_error', 'cursor');

    const other = await api.tenant();
    expectError(await other.api.get(`/v1/broadcasts/${ids[0]}`), 404, 'not_found');
    expectError(await other.api.patch(`/v1/broadcasts/${ids[0]}`, { name: 'mine' }), 404, 'not_found');
    expectError(await other.api.post(`/v1/broadcasts/${ids[0]}/send`, {}), 404, 'not_found');
    expectError(await other.api.post(`/v1/broadcasts/${ids[0]}/cancel`, {}), 404, 'not_found');
    expectError(
      await other.api.post('/v1/broadcasts', { name: 'x', ...content, audience_id: audience }),
      404,
      'not_found',
    );
    expect((await other.api.get('/v1/broadcasts')).body.data).to.deep.equal([]);
    const narrow = await t.newKey({ scopes: ['emails:send', 'contacts:manage'] });
    expectError(await narrow.api.get('/v1/broadcasts'), 403, 'forbidden');
    expectError(await narrow.api.post(`/v1/broadcasts/${ids[0]}/send`, {}), 403, 'forbidden');
  });

  it('sends one email per contact with its own content, skipping the unsubscribed, counting the suppressed, and says broadcast.sent', async function () {
    const aud = (await t.api.post('/v1/audiences', { name: 'Fan-out' })).body.id;
    const ann = await contact('ann@fan.test', { first_name: 'Ann', properties: { plan: 'pro' } }, aud);
    const nameless = await contact('nameless@fan.test', {}, aud);
    await contact('gone@fan.test', { first_name: 'Gone', unsubscribed: true }, aud);
    await contact('blocked@fan.test', { first_name: 'Blocked' }, aud);
    await contact('elsewhere@fan.test', { first_name: 'Other' });
    expect((await t.api.post('/v1/suppressions', { email: 'blocked@fan.test' })).status).to.equal(201);
    const b = (
      await t.api.post('/v1/broadcasts', { name: 'Fan-out', ...content, audience_id: aud, tags: { kind: 'news' } })
    ).body;
    const res = await t.api.post(`/v1/broadcasts/${b.id}/send`, {});
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({ environment: 'test' });
    expect(res.body.status).to.be.oneOf(['sending', 'sent']);
    const done = await sent(b.id);
    expect(done.counts).to.include({ recipients: 4, sent: 2, skipped: 1, suppressed: 1, failed: 0, delivered: 2 });
    expect(done.finished_at).to.be.a('string');

    const emails = await emailsOf(b.id);
    expect(emails.map((e) => JSON.parse(e.to_list)[0]).sort()).to.deep.equal(['ann@fan.test', 'nameless@fan.test']);
    const byContact = new Map(emails.map((e) => [e.contact_id, e]));
    expect(byContact.get(ann)!.subject).to.equal('Hello Ann');
    expect(byContact.get(ann)!.body_html).to.include('Hi Ann, you are on pro.');
    expect(byContact.get(nameless)!.subject).to.equal('Hello there');
    expect(byContact.get(nameless)!.body_html)
      .to.include('you are on free.')
      .and.match(/href="https:\/\/mail\.bro\.test\/p\/[0-9a-z]{26}-[0-9a-f]{20}"/);
    expect(JSON.parse(byContact.get(ann)!.headers)).to.deep.equal({ 'List-Unsubscribe': '<auto>' });

    const email = await t.api.get(`/v1/emails/${byContact.get(ann)!.id}/events`);
    expect(email.body.data.map((e: { type: string }) => e.type)).to.include('email.delivered');
    for (const e of email.body.data) expect(e.data.broadcast_id).to.equal(b.id);
    const events = (await db()
      .store.knex('events')
      .select('type', 'data')
      .where({ project_id: t.project.id, type: 'broadcast.sent' })) as Array<{ data: string }>;
    expect(events.map((e) => JSON.parse(e.data)).filter((d) => d.broadcast_id === b.id)).to.deep.equal([
      {
        broadcast_id: b.id,
        name: 'Fan-out',
        environment: 'test',
        recipients: 4,
        sent: 2,
        suppressed: 1,
        skipped: 1,
        failed: 0,
      },
    ]);

    // a sent broadcast is not a draft any more
    expectError(await t.api.patch(`/v1/broadcasts/${b.id}`, { name: 'again' }), 409, 'conflict');
    expectError(await t.api.post(`/v1/broadcasts/${b.id}/send`, {}), 409, 'conflict');
    expectError(await t.api.post(`/v1/broadcasts/${b.id}/cancel`, {}), 409, 'conflict');
    expectError(await t.api.delete(`/v1/broadcasts/${b.id}`), 409, 'conflict');
  });

  it('honours the topic at send time, and a segment’s filter', async function () {
    const aud = (await t.api.post('/v1/audiences', { name: 'Topics' })).body.id;
    const optIn = (await t.api.post('/v1/topics', { name: 'Product updates', default: 'opt_in' })).body.id;
    const optOut = (await t.api.post('/v1/topics', { name: 'Tips', default: 'opt_out' })).body.id;
    await contact('in@topic.test', { topics: { [optIn]: true }, properties: { plan: 'pro' } }, aud);
    await contact('out@topic.test', { topics: { [optOut]: false }, properties: { plan: 'pro' } }, aud);
    await contact('default@topic.test', {}, aud);
    const send = async (extra: Record<string, unknown>) => {
      const b = (await t.api.post('/v1/broadcasts', { name: 'topic', ...content, ...extra })).body;
      expect((await t.api.post(`/v1/broadcasts/${b.id}/send`, {})).status).to.equal(200);
      await sent(b.id);
      return (await emailsOf(b.id)).map((e) => JSON.parse(e.to_list)[0]).sort();
    };
    expect(await send({ audience_id: aud, topic_id: optIn })).to.deep.equal(['in@topic.test']);
    expect(await send({ audience_id: aud, topic_id: optOut })).to.deep.equal(['default@topic.test', 'in@topic.test']);
    const segment = (await t.api.post('/v1/segments', { name: 'pro', audience_id: aud, filter: "plan == 'pro'" })).body
      .id;
    expect(await send({ segment_id: segment })).to.deep.equal(['in@topic.test', 'out@topic.test']);
    expect(await send({ segment_id: segment, topic_id: optOut })).to.deep.equal(['in@topic.test']);
  });

  it('waits for scheduled_at, and a cancelled broadcast sends nothing', async function () {
    const aud = (await t.api.post('/v1/audiences', { name: 'Later' })).body.id;
    await contact('later@sched.test', {}, aud);
    const later = (await t.api.post('/v1/broadcasts', { name: 'later', ...content, audience_id: aud })).body;
    const at = new Date(Date.now() + 1500).toISOString();
    const res = await t.api.post(`/v1/broadcasts/${later.id}/send`, { scheduled_at: at });
    expect(res.body).to.include({ status: 'scheduled', scheduled_at: at });
    expect(await emailsOf(later.id)).to.have.length(0);
    await sent(later.id);
    expect(await emailsOf(later.id)).to.have.length(1);

    const never = (await t.api.post('/v1/broadcasts', { name: 'never', ...content, audience_id: aud })).body;
    await t.api.post(`/v1/broadcasts/${never.id}/send`, {
      scheduled_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const cancelled = await t.api.post(`/v1/broadcasts/${never.id}/cancel`, {});
    expect(cancelled.body).to.include({ status: 'cancelled' });
    expect(await emailsOf(never.id)).to.have.length(0);
    expectError(await t.api.post(`/v1/broadcasts/${never.id}/send`, {}), 409, 'conflict');
    expectError(
      await t.api.post(`/v1/broadcasts/${never.id}/send`, { scheduled_at: 'tomorrow' }),
      400,
      'validation_error',
      'scheduled_at',
    );
  });

  it('refuses to delete the audience, segment or topic of a broadcast not over yet; once it is cancelled they go', async function () {
    const aud = (await t.api.post('/v1/audiences', { name: 'Kept' })).body.id;
    const seg = (await t.api.post('/v1/segments', { name: 'pro', audience_id: aud, filter: "plan == 'pro'" })).body.id;
    const topic = (await t.api.post('/v1/topics', { name: 'Kept topic', default: 'opt_out' })).body.id;
    const b = (await t.api.post('/v1/broadcasts', { name: 'kept', ...content, segment_id: seg, topic_id: topic })).body;
    await t.api.post(`/v1/broadcasts/${b.id}/send`, { scheduled_at: new Date(Date.now() + 3_600_000).toISOString() });
    expectError(await t.api.delete(`/v1/segments/${seg}`), 409, 'conflict');
    expectError(await t.api.delete(`/v1/topics/${topic}`), 409, 'conflict');
    const onAudience = (await t.api.post('/v1/broadcasts', { name: 'on audience', ...content, audience_id: aud })).body;
    expectError(await t.api.delete(`/v1/audiences/${aud}`), 409, 'conflict');
    await t.api.post(`/v1/broadcasts/${b.id}/cancel`, {});
    await t.api.delete(`/v1/broadcasts/${onAudience.id}`);
    expect((await t.api.delete(`/v1/segments/${seg}`)).status).to.equal(200);
    expect((await t.api.delete(`/v1/topics/${topic}`)).status).to.equal(200);
    expect((await t.api.delete(`/v1/audiences/${aud}`)).status).to.equal(200);
  });

  it('renders a template for each contact and records the version it rendered; a deleted template pauses the broadcast instead of failing its contacts', async function () {
    const template = {
      id: `news-${Date.now()}`,
      name: 'News',
      subject: 'News for {{ contact.first_name | there }}',
      html: '<p>{{ contact.email }}</p>',
      variables: { contact: { type: 'object' } },
    };
    expect((await t.api.post('/v1/templates', template)).status).to.equal(201);
    const aud = (await t.api.post('/v1/audiences', { name: 'Templated' })).body.id;
    await contact('tina@tpl.test', { first_name: 'Tina' }, aud);
    const b = (
      await t.api.post('/v1/broadcasts', {
        name: 'templated',
        from: content.from,
        template_id: template.id,
        audience_id: aud,
      })
    ).body;
    expect((await t.api.post(`/v1/broadcasts/${b.id}/send`, {})).status).to.equal(200);
    await sent(b.id);
    const [email] = await db()
      .store.knex('emails')
      .select('subject', 'body_html', 'template_id', 'template_version')
      .where({ broadcast_id: b.id });
    expect(email).to.include({ subject: 'News for Tina', template_id: template.id });
    expect(Number(email.template_version)).to.equal(1);
    expect(email.body_html).to.include('tina@tpl.test');

    const later = (
      await t.api.post('/v1/broadcasts', {
        name: 'templated 2',
        from: content.from,
        template_id: template.id,
        audience_id: aud,
      })
    ).body;
    await t.api.post(`/v1/broadcasts/${later.id}/send`, { scheduled_at: new Date(Date.now() + 60_000).toISOString() });
    expect((await t.api.delete(`/v1/templates/${template.id}`)).status).to.equal(200);
    // the broadcast's time comes (a fan-out of its own, as another process's)
    await db()
      .store.knex('broadcasts')
      .where({ id: later.id })
      .update({ scheduled_at: Date.now() - 1 });
    const core = buildCore(api.config, db().store, silentLogger());
    const fanOut = buildFanOut(api.config, core, core.acceptQueue!);
    const [due] = (await fanOut.due()).filter((x) => x.id === later.id);
    expect(await fanOut.step(due)).to.equal(false);
    const paused = (await t.api.get(`/v1/broadcasts/${later.id}`)).body;
    expect(paused).to.include({ status: 'sending' });
    expect(paused.last_error).to.match(/^paused: .*template/);
    expect(paused.counts).to.include({ failed: 0, sent: 0 });
    await t.api.post(`/v1/broadcasts/${later.id}/cancel`, {});
  });

  it('fans out each contact exactly once while three fan-outs (as of three processes) work on it at once', async function () {
    this.timeout(60_000);
    const aud = (await t.api.post('/v1/audiences', { name: 'Race' })).body.id;
    for (let i = 0; i < 1200; i += 100) {
      const made = await Promise.all(
        Array.from({ length: 100 }, (_, j) => t.api.post('/v1/contacts', { email: `r${i + j}@race.test` })),
      );
      await t.api.post(`/v1/audiences/${aud}/contacts`, { contact_ids: made.map((m) => m.body.id) });
    }
    const others = [1, 2].map(() => {
      const core = buildCore(api.config, db().store, silentLogger());
      return buildFanOut(api.config, core, core.acceptQueue!);
    });
    const b = (await t.api.post('/v1/broadcasts', { name: 'race', ...content, audience_id: aud })).body;
    await t.api.post(`/v1/broadcasts/${b.id}/send`, {});
    const drive = async (f: (typeof others)[number]) => {
      for (;;) {
        const [due] = (await f.due()).filter((x) => x.id === b.id);
        if (!due) return;
        await f.step(due);
      }
    };
    await Promise.all(others.map(drive));
    const done = await sent(b.id);
    expect(done.counts).to.include({ recipients: 1200, sent: 1200 });
    const contacts = (await emailsOf(b.id)).map((e) => e.contact_id);
    expect(contacts).to.have.length(1200);
    expect(new Set(contacts).size).to.equal(1200);
  });

  it('refuses a template whose required variables the contact variables do not give (invalid_variables, naming it)', async function () {
    const id = `order-${Date.now()}`;
    expect(
      (
        await t.api.post('/v1/templates', {
          id,
          name: 'Order',
          subject: 'Order {{ order_id }}',
          text: 'x',
          variables: { order_id: {} },
        })
      ).status,
    ).to.equal(201);
    expectError(
      await t.api.post('/v1/broadcasts', { name: 'x', from: content.from, template_id: id, audience_id: audience }),
      400,
      'invalid_variables',
      'variables.order_id',
    );
  });

  it('a live key needs an approved project and a verified From domain', async function () {
    const unapproved = await api.tenant({ mode: 'live', approved: false });
    const draft = (
      await unapproved.api.post('/v1/broadcasts', {
        name: 'x',
        ...content,
        audience_id: (await unapproved.api.post('/v1/audiences', { name: 'A' })).body.id,
      })
    ).body;
    expectError(await unapproved.api.post(`/v1/broadcasts/${draft.id}/send`, {}), 403, 'account_not_approved');
    const live = await api.tenant({ mode: 'live' });
    const aud = (await live.api.post('/v1/audiences', { name: 'Live' })).body.id;
    const b = (await live.api.post('/v1/broadcasts', { name: 'live', ...content, audience_id: aud })).body;
    expectError(await live.api.post(`/v1/broadcasts/${b.id}/send`, {}), 422, 'domain_not_verified');
    expect((await live.api.get(`/v1/broadcasts/${b.id}`)).body.status).to.equal('draft');
  });
});
