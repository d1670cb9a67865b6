import { expect } from 'chai';
import { escapeHtml } from '../../src/lib/html.js';
import { html, queryString, Html } from '../../src/dashboard/pages/html.js';
import { settled } from '../../src/dashboard/pages/email-detail.js';
import type { EmailJson, EventJson } from '../../src/dashboard/pages/emails.js';
import { attachmentDisposition } from '../../src/lib/content-disposition.js';

describe('dashboard HTML templates (src/dashboard/pages/html.ts)', function () {
  it('escapes every interpolated value, in text and in attributes', function () {
    const subject = `<script>alert("x")</script> & 'quotes'`;
    const out = html`<a title="${subject}">${subject}</a>`.value;
    expect(out).to.equal(
      '<a title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;</a>',
    );
    expect(escapeHtml('"><img src=x onerror=alert(1)>')).to.not.match(/[<>"]/);
  });

  it('keeps fragments built the same way, renders lists item by item, and nothing for null, undefined and false', function () {
    const items = ['a<b', 'c'].map((x) => html`<li>${x}</li>`);
    expect(html`<ul>${items}</ul>${null}${undefined}${false}${0}`.value).to.equal(
      '<ul><li>a&lt;b</li><li>c</li></ul>0',
    );
    expect(html`${new Html('<b>kept</b>')}`.value).to.equal('<b>kept</b>');
  });

  it('builds query strings from the values that are set', function () {
    expect(queryString({ status: 'failed', to: undefined, cursor: '' })).to.equal('?status=failed');
    expect(queryString({ to: 'a+b@example.com' })).to.equal('?to=a%2Bb%40example.com');
    expect(queryString({})).to.equal('');
  });
});

describe("the email page's refresh (settled, src/dashboard/pages/emails.ts)", function () {
  const now = Date.parse('2026-11-27T12:00:00Z');
  const old = new Date(now - 60_000).toISOString();
  const email = (status: string, recipients: string[]) =>
    ({
      status,
      recipients: recipients.map((s, i) => ({ address: `r${i}@x.test`, kind: 'to', status: s })),
    }) as unknown as EmailJson;
  const event = (at: string, hooks: string[] = []) =>
    ({
      id: 'evt_1',
      type: 'email.delivered',
      recipient: null,
      data: {},
      created_at: at,
      webhook_deliveries: hooks.map((status) => ({
        id: 'whd_1',
        endpoint_id: 'whe_1',
        status,
        attempts: 1,
        last_status_code: 200,
        last_error: null,
      })),
    }) as EventJson;

  it('goes on while the email or any recipient may still change', function () {
    expect(settled(email('queued', ['queued']), [], now)).to.equal(false);
    // accepted as soon as one recipient is: the other is still being retried
    expect(settled(email('accepted', ['delivered', 'deferred']), [event(old)], now)).to.equal(false);
    expect(settled(email('accepted', ['delivered', 'queued']), [event(old)], now)).to.equal(false);
  });

  it('goes on while a webhook delivery is pending, or an event is too new to have its deliveries yet', function () {
    expect(settled(email('accepted', ['delivered']), [event(old, ['pending'])], now)).to.equal(false);
    expect(settled(email('accepted', ['delivered']), [event(new Date(now - 2000).toISOString())], now)).to.equal(false);
  });

  it('stops once every recipient is final and every event is delivered to its endpoints', function () {
    expect(settled(email('accepted', ['delivered', 'bounced']), [event(old, ['succeeded', 'failed'])], now)).to.equal(
      true,
    );
    expect(settled(email('ambiguous', ['ambiguous']), [event(old)], now)).to.equal(true);
  });
});

describe('Content-Disposition of a download (src/lib/content-disposition.ts)', function () {
  it('gives an ASCII fallback and the exact UTF-8 name, and survives a lone surrogate', function () {
    expect(attachmentDisposition('Lieferschein 報告.txt')).to.equal(
      `attachment; filename="Lieferschein __.txt"; filename*=UTF-8''Lieferschein%20%E5%A0%B1%E5%91%8A.txt`,
    );
    expect(attachmentDisposition('a"b\\c.txt')).to.equal(
      `attachment; filename="a_b_c.txt"; filename*=UTF-8''a%22b%5Cc.txt`,
    );
    expect(attachmentDisposition('\ud800a.txt')).to.equal(
      `attachment; filename="_a.txt"; filename*=UTF-8''%EF%BF%BDa.txt`,
    );
  });
});
