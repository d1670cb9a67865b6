import { expect } from 'chai';
import { emailState } from '../../src/dashboard/pages/email-detail.js';
import { listOutcome, type EmailJson, type EventJson } from '../../src/dashboard/pages/emails.js';

const email = (status: string, recipients: string[]) => ({
  status,
  recipients: recipients.map((s, i) => ({ address: `r${i}@x.test`, kind: 'to', status: s })),
});

describe("the emails list's badge (listOutcome, src/dashboard/pages/emails.ts)", function () {
  it('is delivered only when every recipient is', function () {
    expect(listOutcome(email('accepted', ['delivered', 'delivered']))).to.equal('delivered');
    expect(listOutcome(email('accepted', ['delivered', 'bounced']))).to.not.equal('delivered');
  });

  it('shows the worst recipient outcome rather than accepted: bounced, complained, failed, ambiguous, deferred, suppressed', function () {
    expect(listOutcome(email('accepted', ['delivered', 'deferred', 'bounced']))).to.equal('bounced');
    expect(listOutcome(email('accepted', ['complained', 'delivered']))).to.equal('complained');
    expect(listOutcome(email('accepted', ['delivered', 'failed', 'ambiguous']))).to.equal('failed');
    expect(listOutcome(email('accepted', ['delivered', 'ambiguous', 'deferred']))).to.equal('ambiguous');
    expect(listOutcome(email('accepted', ['delivered', 'deferred']))).to.equal('deferred');
    expect(listOutcome(email('accepted', ['delivered', 'suppressed']))).to.equal('suppressed');
    expect(listOutcome(email('queued', ['deferred']))).to.equal('deferred');
    expect(listOutcome(email('failed', ['bounced', 'bounced']))).to.equal('bounced');
  });

  it("is the email's own status while nothing is known of a recipient yet", function () {
    expect(listOutcome(email('queued', ['queued']))).to.equal('queued');
    expect(listOutcome(email('scheduled', ['queued']))).to.equal('scheduled');
    expect(listOutcome(email('submitting', ['queued']))).to.equal('submitting');
    // one recipient delivered, another still waiting its first attempt: accepted, shown without colour
    expect(listOutcome(email('accepted', ['delivered', 'queued']))).to.equal('accepted');
  });
});

describe("the email page's timeline shows email.ambiguous like the other events", function () {
  it('labels it ambiguous, with its host, stage, last reply and what to do', function () {
    const e = {
      ...email('ambiguous', ['ambiguous']),
      id: 'msg_1',
      status_reason: null,
      environment: 'live',
      from: 'a@x.test',
      to: ['r0@x.test'],
      cc: [],
      subject: 's',
      tags: null,
      template_id: null,
      provider_message_id: null,
      attempts: 1,
      scheduled_at: null,
      created_at: '2026-11-30T10:00:00.000Z',
      updated_at: '2026-11-30T10:00:01.000Z',
    } as EmailJson;
    const ev: EventJson = {
      id: 'evt_1',
      type: 'email.ambiguous',
      recipient: 'r0@x.test',
      data: {
        details: {
          host: 'mx.x.test',
          stage: 'data',
          last_reply: 'no answer after the message was transmitted',
          action: 'Ask the recipient, then run `posthorn queue retry msg_1` to send it again.',
        },
      },
      created_at: '2026-11-30T10:00:01.000Z',
      webhook_deliveries: [
        {
          id: 'whd_1',
          endpoint_id: 'whe_1',
          status: 'succeeded',
          attempts: 1,
          last_status_code: 200,
          last_error: null,
        },
      ],
    };
    const out = emailState(e, [ev], Date.parse('2026-11-30T12:00:00Z')).value;
    const entry = /<li class="ev t-email-ambiguous">[\s\S]*?<\/li>\n<\/ol>/.exec(out)?.[0] ?? '';
    expect(entry).to.include('<span class="ev-type">ambiguous</span>');
    for (const text of [
      '<dt>host</dt><dd>mx.x.test</dd>',
      '<dt>stage</dt><dd>data</dd>',
      '<dt>last reply</dt>',
      '<dt>action</dt>',
      'posthorn queue retry msg_1',
      'webhook whe_1',
    ])
      expect(entry).to.include(text);
  });
});
