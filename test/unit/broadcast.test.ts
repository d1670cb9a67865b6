import { expect } from 'chai';
import { ApiError } from '../../src/lib/errors.js';
import {
  afterBatch,
  beginScheduled,
  cancel,
  startSending,
  type Broadcast,
} from '../../src/modules/audience/broadcasts/broadcast.js';
import {
  broadcastVariables,
  checkContent,
  compileInline,
  renderInline,
  sendBodyFor,
} from '../../src/modules/audience/broadcasts/broadcast-content.js';
import { prepareEmail } from '../../src/modules/sending/emails/prepare.js';

const NOW = Date.parse('2026-11-27T10:00:00Z');
const draft: Broadcast = {
  id: 'bro_1',
  projectId: 'prj_1',
  name: 'News',
  status: 'draft',
  content: { from: 'news@shop.test', subject: 'Hi', text: 'x' },
  audienceId: 'aud_1',
  segmentId: null,
  topicId: null,
  environment: null,
  scheduledAt: null,
  startedAt: null,
  cursor: null,
  recipients: 0,
  queued: 0,
  suppressed: 0,
  skipped: 0,
  failed: 0,
  withdrawn: 0,
  error: null,
  finishedAt: null,
  createdAt: 0,
  updatedAt: 0,
};
const ok = (m: ReturnType<typeof startSending>) => {
  if ('refused' in m) throw new Error(m.refused);
  return m.ok;
};

describe('a broadcast’s status (pure)', function () {
  it('sends a draft now (sending, its contacts those created by now) or schedules it; nothing else is sent', function () {
    expect(ok(startSending(draft, null, 'live', NOW))).to.include({
      status: 'sending',
      startedAt: NOW,
      environment: 'live',
      scheduledAt: null,
    });
    expect(ok(startSending(draft, NOW + 60_000, 'test', NOW))).to.include({
      status: 'scheduled',
      scheduledAt: NOW + 60_000,
      startedAt: null,
    });
    // a time already past means now
    expect(ok(startSending(draft, NOW - 1, 'test', NOW)).status).to.equal('sending');
    for (const status of ['scheduled', 'sending', 'sent', 'cancelled'] as const)
      expect(startSending({ ...draft, status }, null, 'live', NOW)).to.have.property('refused');
  });

  it('begins a scheduled broadcast when its time comes, and only that', function () {
    const scheduled = ok(startSending(draft, NOW + 1000, 'live', NOW));
    expect(beginScheduled(scheduled, NOW + 1000)).to.include({ status: 'sending', startedAt: NOW + 1000 });
    const cancelled = ok(cancel(scheduled, NOW));
    expect(beginScheduled(cancelled, NOW + 1000)).to.equal(cancelled);
  });

  it('cancels what is not over; a sent or cancelled broadcast stays as it is', function () {
    for (const status of ['draft', 'scheduled', 'sending'] as const)
      expect(ok(cancel({ ...draft, status }, NOW))).to.include({ status: 'cancelled', finishedAt: NOW });
    expect(cancel({ ...draft, status: 'cancelled' }, NOW)).to.have.property('refused');
    // a sent broadcast's emails may still wait in the queue: the service takes them back, or refuses when none does
    expect(ok(cancel({ ...draft, status: 'sent', finishedAt: NOW - 5 }, NOW))).to.include({
      status: 'cancelled',
      finishedAt: NOW - 5,
    });
  });

  it('adds a batch’s counts and cursor; the last batch makes it sent', function () {
    const sending = ok(startSending(draft, null, 'live', NOW));
    const tally = {
      cursor: 'con_b',
      recipients: 3,
      queued: 1,
      suppressed: 1,
      skipped: 1,
      failed: 0,
      error: null,
      last: false,
    };
    const one = afterBatch(sending, tally, NOW + 1);
    expect(one).to.include({
      status: 'sending',
      cursor: 'con_b',
      recipients: 3,
      queued: 1,
      suppressed: 1,
      skipped: 1,
      finishedAt: null,
    });
    const two = afterBatch(one, { ...tally, cursor: 'con_c', failed: 1, error: 'x: limit', last: true }, NOW + 2);
    expect(two).to.include({
      status: 'sent',
      cursor: 'con_c',
      recipients: 6,
      queued: 2,
      failed: 1,
      error: 'x: limit',
      finishedAt: NOW + 2,
    });
  });
});

describe('a broadcast’s content for one contact (pure)', function () {
  const properties = [{ projectId: 'prj_1', key: 'plan', type: 'string' as const, fallback: 'free', createdAt: 0 }];
  const contact = (first: string | null, props: Record<string, string> = {}) => ({
    id: 'con_1',
    email: 'ann@example.com',
    firstName: first,
    lastName: null,
    properties: props,
  });

  it('renders the contact’s fields and properties, with fallbacks, and the preference link', function () {
    const version = compileInline({
      from: 'news@shop.test',
      subject: 'Hi {{contact.first_name | there}}',
      html: '<p>{{contact.plan}} <a href="{{preferences_url}}">prefs</a> {{contact.last_name | friend}}</p>',
    })!;
    const ann = renderInline(
      version,
      broadcastVariables(contact('Ann', { plan: 'pro' }), properties, 'https://x.test/p/abc'),
    );
    expect(ann.subject).to.equal('Hi Ann');
    expect(ann.html).to.equal('<p>pro <a href="https://x.test/p/abc">prefs</a> friend</p>');
    expect(ann.text, 'the text part is made from the html').to.include('pro');
    const nameless = renderInline(version, broadcastVariables(contact(null), properties, 'https://x.test/p/abc'));
    expect(nameless.subject).to.equal('Hi there');
    expect(nameless.html).to.include('<p>free ');
  });

  it('escapes a contact’s values in html, and a value cannot add a header through the subject', function () {
    const version = compileInline({
      from: 'news@shop.test',
      subject: 'Hi {{contact.first_name}}',
      html: '<p>{{contact.first_name}}</p>',
    })!;
    const r = renderInline(version, broadcastVariables(contact('<b>Eve</b>\r\nBcc: x@evil.test'), [], ''));
    expect(r.html).to.not.include('<b>');
    expect(r.subject).to.not.match(/[\r\n]/);
  });

  it('refuses mistakes with the field, line and column, and content with a template', function () {
    const error = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e as ApiError;
      }
      return null;
    };
    const e = error(() => compileInline({ from: 'a@b.test', subject: 'x', html: '<p>\n{{#if contact.plan}}</p>' }));
    expect(e).to.include({ code: 'validation_error', field: 'html' });
    expect(e!.message).to.match(/^html: line 2, column 1/);
    expect(error(() => compileInline({ from: 'a@b.test', subject: '{{ order }}', text: 'x' }))).to.include({
      field: 'subject',
    });
    expect(error(() => checkContent({ from: 'a@b.test', subject: 'x', template_id: 'welcome' }))).to.include({
      field: 'template_id',
    });
    expect(error(() => checkContent({ from: 'a@b.test', subject: 'x' }))).to.include({ field: 'html' });
    expect(error(() => checkContent({ from: 'a@b.test', text: 'x' }))).to.include({ field: 'subject' });
    expect(compileInline({ from: 'a@b.test', template_id: 'welcome' })).to.equal(null);
  });

  it('makes the send of one contact: one recipient, the broadcast’s tags, one-click unsubscribe asked for', function () {
    const body = sendBodyFor(
      { from: 'News <news@shop.test>', reply_to: ['help@shop.test'], tags: { kind: 'news' } },
      'ann@example.com',
      { subject: 'Hi', html: '<p>x</p>', text: 'x', translation: null },
    );
    expect(body).to.deep.equal({
      from: 'News <news@shop.test>',
      to: ['ann@example.com'],
      reply_to: ['help@shop.test'],
      subject: 'Hi',
      html: '<p>x</p>',
      text: 'x',
      tags: { kind: 'news' },
      headers: { 'List-Unsubscribe': '<auto>' },
    });
    const prepared = prepareEmail(body, NOW);
    expect(prepared.recipients).to.deep.equal([{ address: 'ann@example.com', kind: 'to' }]);
  });
});
