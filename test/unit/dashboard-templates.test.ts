import { expect } from 'chai';
import { previewResult, previewVariables, MAX_FRAME_URL } from '../../src/dashboard/pages/template-preview.js';
import { templateUrl, type TemplateJson } from '../../src/dashboard/pages/templates.js';
import type { Declared } from '../../src/modules/sending/templates/language/index.js';

const DECLARED: Declared = {
  name: { type: 'string', required: true },
  total: { type: 'number', required: true },
  vip: { type: 'boolean', required: false },
  items: { type: 'array', required: false },
  order: { type: 'object', required: false },
};
const form = (fields: Record<string, string>) =>
  new URLSearchParams(Object.entries(fields).map(([k, v]): [string, string] => [`var.${k}`, v]));

describe('dashboard template pages (src/dashboard/pages/templates.ts)', function () {
  it('reads each field as the version declares its variable; a blank field leaves the variable out', function () {
    const r = previewVariables(
      form({ name: ' Ann ', total: ' 12.5 ', vip: 'false', items: '[{"title":"Mug"}]', order: '' }),
      DECLARED,
    );
    expect(r.error).to.equal(undefined);
    expect(r.variables).to.deep.equal({ name: ' Ann ', total: 12.5, vip: false, items: [{ title: 'Mug' }] });
    expect(r.values).to.deep.equal({
      name: ' Ann ',
      total: ' 12.5 ',
      vip: 'false',
      items: '[{"title":"Mug"}]',
      order: '',
    });
    expect(previewVariables(new URLSearchParams(), DECLARED).variables).to.deep.equal({});
  });

  it('names the first variable whose value is not of its kind, and keeps what was typed', function () {
    const r = previewVariables(form({ name: 'Ann', total: 'twelve', vip: 'yes', items: '[' }), DECLARED);
    expect(r.error).to.deep.equal({
      code: 'validation_error',
      field: 'variables.total',
      message: "variables.total: is declared as a number: 'twelve' is not one",
    });
    expect(r.values.vip).to.equal('yes');
    expect(previewVariables(form({ vip: 'yes' }), DECLARED).error?.message).to.equal(
      'variables.vip: is declared as a boolean: true or false',
    );
    expect(previewVariables(form({ order: '{oops' }), DECLARED).error?.message).to.equal(
      'variables.order: is declared as an object: give it as JSON',
    );
    // the kind of a JSON value is the API's to check (invalid_variables)
    expect(previewVariables(form({ items: '{"a":1}' }), DECLARED).variables).to.deep.equal({ items: { a: 1 } });
  });

  it('keeps a variable called __proto__ as a variable', function () {
    const r = previewVariables(
      new URLSearchParams({ 'var.__proto__': 'x' }),
      JSON.parse('{"__proto__":{"type":"string","required":true}}') as Declared,
    );
    expect(Object.getPrototypeOf(r.variables)).to.equal(Object.prototype);
    expect(JSON.stringify(r.variables)).to.equal('{"__proto__":"x"}');
  });

  it('shows a refusal as an alert, and a rendered HTML part in a sandboxed frame or, when its address is too long, as source', function () {
    const t = { id: 'receipt' } as TemplateJson;
    const refused = previewResult(t, {
      values: {},
      language: '',
      error: {
        code: 'invalid_variables',
        field: 'variables.name',
        message: 'variables.name: is required <by> the template',
      },
    }).value;
    expect(refused).to.equal(
      '<p class="error" id="preview-error" role="alert">Cannot render: variables.name: is required &lt;by&gt; the template</p>',
    );

    const result = { version: 2, language: null, subject: 'Hi <Ann>', html: '<p>Hi</p>', text: 'Hi' };
    const shown = previewResult(t, { values: {}, language: 'de', variables: { name: 'Ann & Bo' }, result }).value;
    expect(shown).to.include('Hi &lt;Ann&gt;');
    const src = /<iframe [^>]*sandbox src="([^"]+)"/.exec(shown)![1].replace(/&amp;/g, '&');
    const url = new URL(src, 'http://x.test');
    expect(url.pathname).to.equal(templateUrl('receipt', '/preview/html'));
    expect(Object.fromEntries(url.searchParams)).to.deep.equal({
      version: '2',
      language: 'de',
      variables: '{"name":"Ann & Bo"}',
    });

    const long = previewResult(t, {
      values: {},
      language: '',
      variables: { name: 'x'.repeat(MAX_FRAME_URL) },
      result,
    }).value;
    expect(long).to.not.include('<iframe');
    expect(long).to.include('<pre class="text-part">&lt;p&gt;Hi&lt;/p&gt;</pre>');
  });
});
