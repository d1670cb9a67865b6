import { expect } from 'chai';
import { escapeHtml, html, queryString, Html } from '../../src/dashboard/pages/html.js';

describe('dashboard HTML templates (src/dashboard/pages/html.ts)', function () {
  it('escapes every interpolated value, in text and in attributes', function () {
    const subject = `<script>alert("x")</script> & 'quotes'`;
    const out = html`<a title="${subject}">${subject}</a>`.value;
    expect(out).to.equal('<a title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;</a>');
    expect(escapeHtml('"><img src=x onerror=alert(1)>')).to.not.match(/[<>"]/);
  });

  it('keeps fragments built the same way, renders lists item by item, and nothing for null, undefined and false', function () {
    const items = ['a<b', 'c'].map((x) => html`<li>${x}</li>`);
    expect(html`<ul>${items}</ul>${null}${undefined}${false}${0}`.value).to.equal('<ul><li>a&lt;b</li><li>c</li></ul>0');
    expect(html`${new Html('<b>kept</b>')}`.value).to.equal('<b>kept</b>');
  });

  it('builds query strings from the values that are set', function () {
    expect(queryString({ status: 'failed', to: undefined, cursor: '' })).to.equal('?status=failed');
    expect(queryString({ to: 'a+b@example.com' })).to.equal('?to=a%2Bb%40example.com');
    expect(queryString({})).to.equal('');
  });
});
