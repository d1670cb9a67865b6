import { expect } from 'chai';
import { ApiError } from '../../src/lib/errors.js';
import type { Contact } from '../../src/modules/audience/contacts/contacts.repo.js';
import type { Topic } from '../../src/modules/audience/topics/topics.repo.js';
import {
  choicesIn,
  fromResendContact,
  fromResendContactUpdate,
  resendContact,
  resendDeletedContact,
  topicChoicesOf,
} from '../../src/modules/compat/resend/resend-contacts.js';
import { pageHeld } from '../../src/modules/compat/resend/resend-contacts-pages.js';
import { fromResendTopic, resendContactTopic, resendTopic } from '../../src/modules/compat/resend/resend-topics.js';

// The translations of Resend's contacts and topics (docs/resend.md): pure, so table-tested here;
// test/compat/resend-contacts.test.ts runs them through Resend's SDK.

const TOPIC = 'top_01jz0000000000000000000000';

const refusal = (f: () => unknown): ApiError => {
  try {
    f();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('not refused');
};

describe("Resend's contacts, as ours", function () {
  it('reads opt_in as subscribed and opt_out as not', function () {
    expect(
      topicChoicesOf([
        { id: 'top_a', subscription: 'opt_in' },
        { id: 'top_b', subscription: 'opt_out' },
      ]),
    ).to.deep.equal({ top_a: true, top_b: false });
  });

  it('refuses a topic given two answers, naming the second', function () {
    const e = refusal(() =>
      topicChoicesOf([
        { id: 'top_a', subscription: 'opt_in' },
        { id: 'top_a', subscription: 'opt_out' },
      ]),
    );
    expect(e.field).to.equal('topics[1].subscription');
  });

  it('keeps a topic id such as __proto__ a plain key', function () {
    const out = topicChoicesOf([{ id: '__proto__', subscription: 'opt_in' }]);
    expect(Object.getPrototypeOf(out)).to.equal(Object.prototype);
    expect(Object.keys(out)).to.deep.equal(['__proto__']);
  });

  it('takes the SDK bare array and the {topics} of the docs', function () {
    const c = [{ id: 'top_a', subscription: 'opt_in' as const }];
    expect(choicesIn(c)).to.equal(c);
    expect(choicesIn({ topics: c })).to.equal(c);
  });

  context('when a contact is created', function () {
    it('makes the body of POST /v1/contacts, segments as the audiences it joins, each once', function () {
      const got = fromResendContact({
        email: 'Ann@Example.com',
        first_name: 'Ann',
        unsubscribed: false,
        properties: { plan: 'pro', seats: 3 },
        segments: [{ id: 'aud_1' }, { id: 'aud_2' }, { id: 'aud_1' }],
        topics: [{ id: TOPIC, subscription: 'opt_out' }],
      });
      expect(got.body).to.deep.equal({
        email: 'Ann@Example.com',
        first_name: 'Ann',
        unsubscribed: false,
        properties: { plan: 'pro', seats: 3 },
        topics: { [TOPIC]: false },
      });
      expect(got.audienceIds).to.deep.equal(['aud_1', 'aud_2']);
    });

    it('leaves out what the client left out, and ignores fields Resend does not know', function () {
      const body = { email: 'a@example.com', colour: 'blue' } as Parameters<typeof fromResendContact>[0];
      expect(fromResendContact(body)).to.deep.equal({ body: { email: 'a@example.com' }, audienceIds: [] });
    });

    it('refuses what POST /v1/contacts refuses, naming the field', function () {
      const e = refusal(() => fromResendContact({ email: 'a@example.com', first_name: 'x'.repeat(201) }));
      expect(e.field).to.equal('first_name');
    });
  });

  it('keeps null in an update: it clears the field', function () {
    expect(fromResendContactUpdate({ first_name: null, properties: { plan: null } })).to.deep.equal({
      first_name: null,
      properties: { plan: null },
    });
  });

  it('shows a contact as Resend does: properties as {type, value}', function () {
    const c: Contact = {
      id: 'con_1',
      projectId: 'prj_1',
      email: 'ann@example.com',
      firstName: 'Ann',
      lastName: null,
      properties: { plan: 'pro', seats: 3, vip: true, since: '2026-01-01' },
      unsubscribed: true,
      pending: false,
      createdAt: Date.UTC(2026, 0, 2),
      updatedAt: Date.UTC(2026, 0, 3),
    };
    expect(resendContact(c)).to.deep.equal({
      object: 'contact',
      id: 'con_1',
      email: 'ann@example.com',
      first_name: 'Ann',
      last_name: null,
      unsubscribed: true,
      created_at: '2026-01-02T00:00:00.000Z',
      properties: {
        plan: { type: 'string', value: 'pro' },
        seats: { type: 'number', value: 3 },
        vip: { type: 'boolean', value: true },
        since: { type: 'string', value: '2026-01-01' },
      },
    });
    expect(resendDeletedContact(c)).to.deep.equal({ object: 'contact', id: 'con_1', contact: 'con_1', deleted: true });
  });
});

describe("Resend's topics, as ours", function () {
  const topic = (d: Topic['default']): Topic => ({
    id: TOPIC,
    projectId: 'prj_1',
    name: 'News',
    description: null,
    default: d,
    createdAt: Date.UTC(2026, 0, 2),
  });

  it("reads Resend's opt_in as subscribed and opt_out as unsubscribed", function () {
    expect(fromResendTopic({ name: 'News', default_subscription: 'opt_in' })).to.deep.include({
      default_subscription: 'subscribed',
    });
    expect(fromResendTopic({ name: 'News', default_subscription: 'opt_out' })).to.deep.include({
      default_subscription: 'unsubscribed',
    });
  });

  it("shows ours in Resend's words: stored opt_out (everyone but who left) is Resend's opt_in", function () {
    // the stored column keeps the deprecated words, the other way round
    expect(resendTopic(topic('opt_out'))).to.deep.include({ default_subscription: 'opt_in' });
    expect(resendTopic(topic('opt_in'))).to.deep.include({ default_subscription: 'opt_out' });
    expect(resendTopic(topic('opt_out'))).to.deep.equal({
      object: 'topic',
      id: TOPIC,
      name: 'News',
      description: null,
      default_subscription: 'opt_in',
      created_at: '2026-01-02T00:00:00.000Z',
    });
  });

  it("shows a contact's subscription as opt_in or opt_out", function () {
    expect(resendContactTopic(topic('opt_in'), true)).to.deep.include({ subscription: 'opt_in' });
    expect(resendContactTopic(topic('opt_in'), false)).to.deep.include({ subscription: 'opt_out' });
  });
});

describe("Resend's pages of a list held whole", function () {
  const items = ['id_1', 'id_2', 'id_3', 'id_4', 'id_5'].map((id) => ({ id }));
  const ids = (p: { data: Array<{ id: string }> }) => p.data.map((x) => x.id);

  it('shows the newest first, and whether more follow', function () {
    const p = pageHeld(items, { limit: 2 });
    expect(ids(p)).to.deep.equal(['id_5', 'id_4']);
    expect(p.hasMore).to.equal(true);
    expect(pageHeld(items, { limit: 5 }).hasMore).to.equal(false);
  });

  it('pages to older items after an id, and to newer ones before it', function () {
    expect(ids(pageHeld(items, { limit: 2, after: 'id_4' }))).to.deep.equal(['id_3', 'id_2']);
    const last = pageHeld(items, { limit: 2, after: 'id_2' });
    expect(ids(last)).to.deep.equal(['id_1']);
    expect(last.hasMore).to.equal(false);
    const back = pageHeld(items, { limit: 2, before: 'id_2' });
    expect(ids(back)).to.deep.equal(['id_4', 'id_3']);
    expect(back.hasMore).to.equal(true);
    expect(pageHeld(items, { limit: 2, before: 'id_4' }).hasMore).to.equal(false);
  });

  it('refuses both cursors at once', function () {
    expect(refusal(() => pageHeld(items, { limit: 2, after: 'id_4', before: 'id_2' })).field).to.equal('before');
  });
});
