import { expect } from 'chai';
import { newId } from '../../src/lib/ids.js';
import type { EventType } from '../../src/modules/notifying/events/event-types.js';
import { bounceDetails } from '../../src/modules/sending/emails/lifecycle-outcomes.js';
import {
  bounceSubType,
  resendEventBody,
  timeOfId,
  type ResendInput,
} from '../../src/modules/notifying/webhooks/resend-payload.js';
import { eventBody } from '../../src/modules/notifying/webhooks/signed-post.js';

const EMAIL_AT = Date.parse('2026-11-29T10:00:00.000Z');
const EVENT_AT = Date.parse('2026-11-29T10:00:05.250Z');
/** an email id made at `at` (lib/ids.ts's layout), whatever ids this process made before */
const idAt = (at: number) => {
  let time = '';
  for (let ms = at, i = 0; i < 10; i++, ms = Math.floor(ms / 32))
    time = '0123456789abcdefghjkmnpqrstvwxyz'[ms % 32] + time;
  return `msg_${time}${'0'.repeat(16)}`;
};
const EMAIL_ID = idAt(EMAIL_AT);

/** an email event's data as the service stores it (interface §6) */
const emailData = (details: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  email_id: EMAIL_ID,
  request_id: 'req_01m8dg6wjtanbbptjpxbbc3hcn',
  environment: 'live',
  from: 'Shop <hello@shop.example>',
  subject: 'Your order',
  tags: { order: '42' },
  recipient: 'ann@example.net',
  ...extra,
  details,
});

const event = (type: EventType, data: Record<string, unknown>, recipient: string | null = 'ann@example.net') =>
  ({ type, createdAt: EVENT_AT, recipient, data }) satisfies ResendInput;

/** Resend's fields of every email event (BaseEmailEventData of its SDK) */
const base = {
  created_at: '2026-11-29T10:00:00.000Z',
  email_id: EMAIL_ID,
  from: 'Shop <hello@shop.example>',
  to: ['ann@example.net'],
  subject: 'Your order',
  tags: { order: '42' },
};

describe('the Resend payload of an event', function () {
  it('reads the time an id was made from the id', function () {
    expect(timeOfId(EMAIL_ID)).to.equal(EMAIL_AT);
    // a fresh id of this process reads as made now (or later, once the process made ids ahead of its clock)
    expect(timeOfId(newId('email'))).to.be.at.least(Date.now() - 1000);
    expect(timeOfId(`inb_${'0'.repeat(9)}1${'z'.repeat(16)}`)).to.equal(1);
    expect(timeOfId('msg_not-an-id')).to.equal(null);
    expect(timeOfId(42)).to.equal(null);
  });

  for (const type of [
    'email.sent',
    'email.scheduled',
    'email.delivered',
    'email.delivery_delayed',
    'email.complained',
    'email.opened',
  ] as const) {
    it(`${type}: type, event time, and the email's fields only (no id, no details)`, function () {
      expect(resendEventBody(event(type, emailData({ reply: '250 OK' })))).to.deep.equal({
        type,
        created_at: '2026-11-29T10:00:05.250Z',
        data: base,
      });
    });
  }

  it('email.bounced: bounce {message, subType, type} from the bounce the service classified', function () {
    const details = bounceDetails(
      {
        bounceType: 'Permanent',
        reason: 'user_unknown',
        status: '5.1.1',
        diagnostic: '550 5.1.1 <ann@example.net>: User unknown',
      },
      null,
    );
    expect(resendEventBody(event('email.bounced', emailData(details))).data).to.deep.equal({
      ...base,
      bounce: { message: '550 5.1.1 <ann@example.net>: User unknown', subType: 'NoEmail', type: 'Permanent' },
    });
  });

  it("maps bounce reasons onto Amazon SES's subtypes, as Resend reports them", function () {
    expect(bounceSubType('Transient', 'mailbox_full')).to.equal('MailboxFull');
    expect(bounceSubType('Transient', 'exceed_limit')).to.equal('MessageTooLarge');
    expect(bounceSubType('Transient', 'spam_detected')).to.equal('ContentRejected');
    expect(bounceSubType('Permanent', 'host_unknown')).to.equal('General');
    expect(bounceSubType('Transient', 'blocked')).to.equal('General');
    expect(bounceSubType('Undetermined', 'undefined')).to.equal('Undetermined');
  });

  it('email.clicked: click {link, timestamp, userAgent}; no ipAddress, which the service does not keep', function () {
    const data = emailData({ url: 'https://shop.example/order/42', user_agent: 'TestMail/1.0' });
    expect(resendEventBody(event('email.clicked', data)).data).to.deep.equal({
      ...base,
      click: {
        link: 'https://shop.example/order/42',
        timestamp: '2026-11-29T10:00:05.250Z',
        userAgent: 'TestMail/1.0',
      },
    });
    const noAgent = emailData({ url: 'https://shop.example/', user_agent: null });
    expect(resendEventBody(event('email.clicked', noAgent)).data.click).to.deep.equal({
      link: 'https://shop.example/',
      timestamp: '2026-11-29T10:00:05.250Z',
    });
  });

  it('email.failed and email.suppressed: failed {reason}, suppressed {message, type}', function () {
    expect(resendEventBody(event('email.failed', emailData({ reason: 'domain_not_verified' }))).data).to.deep.equal({
      ...base,
      failed: { reason: 'domain_not_verified' },
    });
    expect(
      resendEventBody(event('email.suppressed', emailData({ reason: 'complaint' }))).data.suppressed,
    ).to.deep.equal({
      message: "the address is on this project's suppression list (reason: complaint)",
      type: 'OnAccountSuppressionList',
    });
  });

  it("keeps a broadcast's id, and the recipient the event is about as `to`", function () {
    const data = emailData({}, { broadcast_id: 'bro_1', recipient: 'bob@example.net' });
    expect(resendEventBody(event('email.delivered', data, 'bob@example.net')).data).to.deep.equal({
      broadcast_id: 'bro_1',
      ...base,
      to: ['bob@example.net'],
    });
  });

  it('an email event Resend does not have keeps its type, the email’s fields and the details', function () {
    const details = { host: 'mx.example.net', stage: 'data', last_reply: 'timeout', action: 'ask' };
    expect(resendEventBody(event('email.ambiguous', emailData(details)))).to.deep.equal({
      type: 'email.ambiguous',
      created_at: '2026-11-29T10:00:05.250Z',
      data: { ...base, details },
    });
  });

  it('email.unsubscribed of an email deleted since: what the event knows', function () {
    const data = { email_id: EMAIL_ID, environment: 'live', recipient: 'ann@example.net', details: { method: 'link' } };
    expect(JSON.parse(JSON.stringify(resendEventBody(event('email.unsubscribed', data)).data))).to.deep.equal({
      created_at: '2026-11-29T10:00:00.000Z',
      email_id: EMAIL_ID,
      to: ['ann@example.net'],
      tags: {},
      details: { method: 'link' },
    });
  });

  it("email.received: Resend's inbound fields", function () {
    const inboundId = idAt(EMAIL_AT).replace(/^msg_/, 'inb_');
    const data = {
      inbound_id: inboundId,
      from: 'Ann <ann@example.net>',
      to: ['support@shop.example'],
      cc: [],
      subject: 'Help',
      message_id: '<1@example.net>',
      attachments: [{ filename: 'a.pdf', content_type: 'application/pdf', size: 10 }],
      environment: 'live',
    };
    expect(resendEventBody(event('email.received', data, 'support@shop.example')).data).to.deep.equal({
      email_id: inboundId,
      created_at: '2026-11-29T10:00:00.000Z',
      from: 'Ann <ann@example.net>',
      to: ['support@shop.example'],
      cc: [],
      bcc: [],
      received_for: ['support@shop.example'],
      message_id: '<1@example.net>',
      subject: 'Help',
      attachments: [
        { filename: 'a.pdf', content_type: 'application/pdf', content_disposition: null, content_id: null, size: 10 },
      ],
    });
  });

  it("contact.*: Resend's contact fields, our audiences as its segments", function () {
    const contact = {
      object: 'contact',
      id: 'con_1',
      email: 'ann@example.net',
      first_name: 'Ann',
      last_name: null,
      properties: { plan: 'pro' },
      unsubscribed: false,
      pending: false,
      audiences: ['aud_1', 'aud_2'],
      topics: {},
      created_at: '2026-11-29T09:00:00.000Z',
      updated_at: '2026-11-29T10:00:00.000Z',
    };
    expect(resendEventBody(event('contact.updated', contact)).data).to.deep.equal({
      id: 'con_1',
      audience_id: 'aud_1',
      segment_ids: ['aud_1', 'aud_2'],
      created_at: '2026-11-29T09:00:00.000Z',
      updated_at: '2026-11-29T10:00:00.000Z',
      email: 'ann@example.net',
      first_name: 'Ann',
      last_name: null,
      unsubscribed: false,
    });
  });

  it('an event about no email and with no Resend counterpart keeps its data as it is', function () {
    const data = { target: 'shop.example', kind: 'domain', list: 'dbl.example', codes: [], reason: null };
    expect(resendEventBody(event('domain.blocklisted', data, null))).to.deep.equal({
      type: 'domain.blocklisted',
      created_at: '2026-11-29T10:00:05.250Z',
      data,
    });
  });

  it('is the body of a delivery only to an endpoint with payload "resend"', function () {
    const stored = { ...event('email.sent', emailData()), id: 'evt_1', projectId: 'prj_1', emailId: EMAIL_ID };
    const service = JSON.parse(eventBody({ ...stored, simulated: true }, 'service'));
    expect(service).to.deep.equal({
      id: 'evt_1',
      object: 'event',
      type: 'email.sent',
      created_at: '2026-11-29T10:00:05.250Z',
      simulated: true,
      data: emailData(),
    });
    expect(JSON.parse(eventBody({ ...stored, simulated: true }, 'resend'))).to.deep.equal({
      type: 'email.sent',
      created_at: '2026-11-29T10:00:05.250Z',
      data: base,
    });
  });
});
