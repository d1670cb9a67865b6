import { expect } from 'chai';
import {
  duplicateOf,
  fromResendBroadcast,
  fromResendBroadcastPatch,
  resendBroadcast,
  resendListedBroadcast,
  type ResendCreateBroadcastBody,
} from '../../src/modules/compat/resend/resend-broadcasts.js';
import { BROADCAST_STATUSES, type Broadcast } from '../../src/modules/audience/broadcasts/broadcast.js';
import { thrownApiError } from '../helpers/assert.js';

// Resend's broadcast bodies as ours, and ours as Resend shows them (docs/resend.md). Pure.

const AUD = 'aud_01kb0000000000000000000000';
const SEG = 'seg_01kb0000000000000000000000';
const TOP = 'top_01kb0000000000000000000000';

const create = (b: Partial<ResendCreateBroadcastBody>): ResendCreateBroadcastBody => ({
  from: 'Acme <news@acme.test>',
  subject: 'Hello {{{FIRST_NAME|there}}}',
  html: '<p>Hi {{{FIRST_NAME|there}}}</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">unsubscribe</a>',
  segment_id: AUD,
  ...b,
});

const broadcast = (b: Partial<Broadcast>): Broadcast => ({
  id: 'bro_1',
  projectId: 'prj_1',
  name: 'News',
  status: 'draft',
  content: {
    from: 'Acme <news@acme.test>',
    subject: "Hello {{ contact.first_name | 'there' }}",
    html: '<a href="{{ unsubscribe_url }}">x</a>',
  },
  audienceId: AUD,
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
  createdAt: Date.UTC(2026, 0, 1),
  updatedAt: Date.UTC(2026, 0, 1),
  ...b,
});

describe("Resend's broadcast create as our draft", function () {
  it('sends a segment to our audience of that id, translating the content, named after its subject', function () {
    expect(fromResendBroadcast(create({ reply_to: 'r@acme.test', topic_id: TOP }))).to.deep.equal({
      name: 'Hello {{{FIRST_NAME|there}}}',
      from: 'Acme <news@acme.test>',
      reply_to: ['r@acme.test'],
      subject: "Hello {{ contact.first_name | 'there' }}",
      html: '<p>Hi {{ contact.first_name | \'there\' }}</p><a href="{{ unsubscribe_url }}">unsubscribe</a>',
      audience_id: AUD,
      topic_id: TOP,
    });
  });

  it('takes audience_id (the older name) too, and one of our segments by its id', function () {
    expect(fromResendBroadcast(create({ segment_id: undefined, audience_id: AUD, name: 'N' }))).to.include({
      name: 'N',
      audience_id: AUD,
    });
    const seg = fromResendBroadcast(create({ segment_id: SEG }));
    expect(seg).to.include({ segment_id: SEG });
    expect(seg).not.to.have.property('audience_id');
  });

  it('refuses what has no counterpart, naming the field', function () {
    const cases: Array<[Partial<ResendCreateBroadcastBody>, string, string]> = [
      [{ preview_text: 'Three things' }, 'preview_text', 'not available'],
      [{ scheduled_at: 'in 1 hour' }, 'scheduled_at', 'only allowed with send: true'],
      [{ segment_id: undefined }, 'segment_id', 'is required'],
      [{ audience_id: 'aud_01kb0000000000000000000001' }, 'audience_id', 'another segment'],
      [{ html: '{{{COMPANY}}}' }, 'html', 'not available in a broadcast'],
      [{ topic_id: 'nope' }, 'topic_id', 'topic_id: '],
    ];
    for (const [b, field, words] of cases) {
      const e = thrownApiError(() => fromResendBroadcast(create(b)));
      expect(e.field, field).to.equal(field);
      expect(e.message).to.include(words);
    }
    expect(thrownApiError(() => fromResendBroadcast(create({ segment_id: 'nope' }))).code).to.equal('not_found');
    // an empty preview text is none
    expect(fromResendBroadcast(create({ preview_text: '' }))).not.to.have.property('preview_text');
  });
});

describe("Resend's broadcast update as our patch", function () {
  it('changes the fields given, translated, and nothing when none is', function () {
    expect(fromResendBroadcastPatch({ subject: 'Hi {{{EMAIL}}}', text: null, name: null })).to.deep.equal({
      subject: 'Hi {{ contact.email }}',
      text: null,
    });
    expect(fromResendBroadcastPatch({})).to.equal(null);
  });

  it('moves it to another segment, leaving the other kind of target', function () {
    expect(fromResendBroadcastPatch({ segment_id: SEG })).to.deep.equal({ audience_id: null, segment_id: SEG });
    expect(fromResendBroadcastPatch({ audience_id: AUD })).to.deep.equal({ audience_id: AUD, segment_id: null });
  });

  it('refuses a preview text', function () {
    expect(thrownApiError(() => fromResendBroadcastPatch({ preview_text: 'x' })).field).to.equal('preview_text');
  });
});

describe('our broadcasts as Resend shows them', function () {
  it('maps each status of ours onto Resend’s', function () {
    const resend = Object.fromEntries(
      BROADCAST_STATUSES.map((s) => [s, resendListedBroadcast(broadcast({ status: s })).status]),
    );
    expect(resend).to.deep.equal({
      draft: 'draft',
      scheduled: 'queued',
      sending: 'queued',
      sent: 'sent',
      cancelled: 'canceled',
    });
  });

  it('answers its content in Resend’s syntax, the segment under both names, and when it was sent', function () {
    const got = resendBroadcast(
      broadcast({
        status: 'sent',
        startedAt: Date.UTC(2026, 0, 2),
        topicId: TOP,
        content: { ...broadcast({}).content, reply_to: ['r@x.test'] },
      }),
    );
    expect(got).to.deep.equal({
      object: 'broadcast',
      id: 'bro_1',
      name: 'News',
      audience_id: AUD,
      segment_id: AUD,
      status: 'sent',
      created_at: '2026-01-01T00:00:00.000Z',
      scheduled_at: null,
      sent_at: '2026-01-02T00:00:00.000Z',
      from: 'Acme <news@acme.test>',
      subject: 'Hello {{{contact.first_name|there}}}',
      reply_to: ['r@x.test'],
      preview_text: null,
      topic_id: TOP,
      html: '<a href="{{{RESEND_UNSUBSCRIBE_URL}}}">x</a>',
      text: null,
    });
  });

  it('duplicates a draft’s content and target under a new name', function () {
    expect(duplicateOf(broadcast({ segmentId: SEG, audienceId: null, topicId: TOP }))).to.deep.equal({
      from: 'Acme <news@acme.test>',
      subject: "Hello {{ contact.first_name | 'there' }}",
      html: '<a href="{{ unsubscribe_url }}">x</a>',
      name: 'News (copy)',
      segment_id: SEG,
      topic_id: TOP,
    });
  });
});
