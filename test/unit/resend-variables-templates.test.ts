import { expect } from 'chai';
import {
  checkedAlias,
  keptVariables,
  publishBodyOf,
  refuseSender,
  sourceOf,
  type ResendTemplateSource,
  type VersionBase,
} from '../../src/modules/compat/resend/resend-templates.js';
import { pageOf, resendTemplate } from '../../src/modules/compat/resend/resend-templates.presenter.js';
import { publishedContent } from '../../src/modules/sending/templates/template-changes.js';
import { renderVersion } from '../../src/modules/sending/templates/render-version.js';
import { compileVersion } from '../../src/modules/sending/templates/versions.js';
import type { Template, TemplateVersion, TemplateVersionInfo } from '../../src/modules/sending/templates/template.js';
import type { PublishTemplateBody } from '../../src/modules/sending/templates/templates.schema.js';
import { thrownApiError } from '../helpers/assert.js';

// A Resend template (its {{{VAR}}} syntax and declared variables) as the body of our publish, and
// what our renderer then sends with a send's variables (docs/resend.md).

const source = (s: Partial<ResendTemplateSource>): ResendTemplateSource => ({
  syntax: 'resend',
  subject: 'Your order',
  html: '<p>x</p>',
  text: null,
  variables: [],
  ...s,
});

/** The version a publish of `body` makes (what the templates service compiles and stores). */
function versionOf(body: PublishTemplateBody): TemplateVersion {
  const content = publishedContent(body);
  return {
    ...content,
    templateUid: 'tpl_x',
    templateId: body.id,
    version: 1,
    restoredFrom: null,
    createdAt: 0,
    compiled: compileVersion(content),
  };
}

const send = (body: PublishTemplateBody, vars: Record<string, unknown>) => renderVersion(versionOf(body), vars, null);

const order = source({
  subject: 'Order of {{{PRODUCT}}}',
  html: '<p>Name: {{{PRODUCT}}}</p><p>Total: {{{PRICE}}}</p><p>For {{{BUYER|you}}}</p>',
  variables: keptVariables([
    { key: 'PRODUCT', type: 'string', fallback_value: 'item' },
    { key: 'PRICE', type: 'number' },
    { key: 'BUYER', type: 'string', fallback_value: 'our customer' },
  ]),
});

describe('a Resend template as our publish (resend-templates.ts)', function () {
  it('declares each variable, required when it has no fallback, and puts declared fallbacks in its placeholders', function () {
    const body = publishBodyOf('order', 'Order', order, null);
    expect(body).to.deep.include({ id: 'order', name: 'Order', subject: "Order of {{ PRODUCT | 'item' }}" });
    expect(body.variables).to.deep.equal({
      PRODUCT: { type: 'string', required: false },
      PRICE: { type: 'number', required: true },
      BUYER: { type: 'string', required: false },
    });
    // an inline fallback wins over the declared one
    expect(body.html).to.equal(
      "<p>Name: {{ PRODUCT | 'item' }}</p><p>Total: {{ PRICE }}</p><p>For {{ BUYER | 'you' }}</p>",
    );
  });

  it('renders the values a send gives, and the fallbacks of those it does not', function () {
    const body = publishBodyOf('order', 'Order', order, null);
    expect(send(body, { PRODUCT: 'Mug', PRICE: 499, BUYER: 'Ann' })).to.deep.include({
      subject: 'Order of Mug',
      html: '<p>Name: Mug</p><p>Total: 499</p><p>For Ann</p>',
    });
    const fallbacks = send(body, { PRICE: 25 });
    expect(fallbacks).to.deep.include({
      subject: 'Order of item',
      html: '<p>Name: item</p><p>Total: 25</p><p>For you</p>',
    });
    expect(fallbacks.text).to.equal('Name: item\n\nTotal: 25\n\nFor you');
  });

  it('requires only what a placeholder would otherwise leave empty', function () {
    const s = source({
      html: '<p>{{{A|own}}} {{{B}}} {{{C|own}}}</p>',
      variables: keptVariables([
        { key: 'A', type: 'string' },
        { key: 'B', type: 'string' },
        { key: 'C', type: 'string' },
        { key: 'UNUSED', type: 'number' },
      ]),
    });
    const body = publishBodyOf('t', 'T', { ...s, subject: 'About {{{C}}}' }, null);
    expect(body.variables).to.deep.equal({
      A: { type: 'string', required: false },
      B: { type: 'string', required: true },
      C: { type: 'string', required: true },
      UNUSED: { type: 'number', required: false },
    });
  });

  it('refuses a send without a variable that has no fallback, as Resend does', function () {
    const e = thrownApiError(() => send(publishBodyOf('order', 'Order', order, null), { PRODUCT: 'Mug' }));
    expect(e.code).to.equal('invalid_variables');
    expect(e.field).to.equal('variables.PRICE');
  });

  it('refuses a variable used but not declared, in Resend’s words', function () {
    const e = thrownApiError(() => publishBodyOf('t', 'T', source({ html: '<p>{{{NOPE}}}</p>' }), null));
    expect(e.field).to.equal('html');
    expect(e.message).to.equal(
      "html line 1, column 4: Variable 'NOPE' is used in the template but not defined in the variables list",
    );
  });

  it('refuses reserved, repeated and malformed keys, and a fallback of another type', function () {
    const vars = (...v: Parameters<typeof keptVariables>[0]) => source({ variables: keptVariables(v) });
    const cases: Array<[ResendTemplateSource, string, string]> = [
      [vars({ key: 'FIRST_NAME', type: 'string' }), 'variables[0].key', "'FIRST_NAME' is a reserved name"],
      [vars({ key: 'contact', type: 'string' }), 'variables[0].key', 'reserved'],
      [vars({ key: 'A', type: 'string' }, { key: 'A', type: 'number' }), 'variables[1].key', 'declared twice'],
      [vars({ key: '1A', type: 'string' }), 'variables[0].key', 'letters, digits and _'],
      [vars({ key: 'A', type: 'number', fallback_value: 'x' }), 'variables[0].fallback_value', 'must be a number'],
      [vars({ key: 'A', type: 'string', fallback_value: 2 }), 'variables[0].fallback_value', 'must be a string'],
    ];
    for (const [s, field, words] of cases) {
      const e = thrownApiError(() => publishBodyOf('t', 'T', s, null));
      expect(e.field, field).to.equal(field);
      expect(e.message).to.include(words);
    }
    const many = keptVariables(Array.from({ length: 51 }, (_, i) => ({ key: `V${i}`, type: 'string' as const })));
    expect(thrownApiError(() => publishBodyOf('t', 'T', source({ variables: many }), null)).field).to.equal(
      'variables',
    );
  });

  it('keeps the variables, translations and design of the version it changes when it gives none', function () {
    const base: VersionBase = {
      variables: { order: { type: 'object', required: true } },
      translations: { de: { subject: 'Bestellung {{ order.number }}' } },
      design: null,
    };
    const body = publishBodyOf('t', undefined, source({ subject: 'Order {{ order.number }}', variables: null }), base);
    expect(body.variables).to.deep.equal(base.variables);
    expect(body.translations).to.deep.equal(base.translations);
    expect(send(body, { order: { number: 'A-1' } }).subject).to.equal('Order A-1');
    const design = { blocks: [{ type: 'text' as const, text: 'Hi' }] } as unknown as VersionBase['design'];
    const designed = publishBodyOf('t', undefined, source({ html: null, variables: null }), { ...base, design });
    expect(designed.design).to.deep.equal(design);
  });

  it('takes an alias that is one of our ids, and refuses a sender', function () {
    expect(checkedAlias('order-confirmation')).to.equal('order-confirmation');
    expect(thrownApiError(() => checkedAlias('Order Confirmation')).field).to.equal('alias');
    expect(thrownApiError(() => refuseSender({ from: 'a@x.test' })).message).to.include('not available');
    expect(thrownApiError(() => refuseSender({ reply_to: ['a@x.test'] })).field).to.equal('reply_to');
    refuseSender({ from: null, reply_to: [] });
  });
});

describe('our templates as Resend shows them (resend-templates.presenter.ts)', function () {
  const template: Template = {
    uid: 'tpl_1',
    projectId: 'prj_1',
    id: 'order',
    name: 'Order',
    category: null,
    split: null,
    latestVersion: 2,
    createdAt: Date.UTC(2026, 0, 1),
    updatedAt: Date.UTC(2026, 0, 2),
  };
  const info = (v: Partial<TemplateVersionInfo>): TemplateVersionInfo => ({
    templateUid: 'tpl_1',
    templateId: 'order',
    version: 2,
    subject: "Order of {{ PRODUCT | 'item' }}",
    html: '<p>{{ PRODUCT }}</p>',
    text: null,
    design: null,
    translations: {},
    variables: { PRODUCT: { type: 'string', required: false } },
    restoredFrom: null,
    createdAt: Date.UTC(2026, 0, 2),
    ...v,
  });

  it('answers the source as written through /resend, its variables with their fallbacks', function () {
    const got = resendTemplate(template, info({ foreignSource: order }));
    expect(got).to.deep.include({
      object: 'template',
      id: 'order',
      alias: 'order',
      name: 'Order',
      status: 'published',
      subject: 'Order of {{{PRODUCT}}}',
      html: order.html,
      text: null,
      from: null,
      reply_to: null,
      published_at: '2026-01-02T00:00:00.000Z',
      created_at: '2026-01-01T00:00:00.000Z',
      has_unpublished_versions: false,
      current_version_id: 'order@2',
    });
    expect(got.variables[0]).to.deep.equal({
      key: 'PRODUCT',
      type: 'string',
      fallback_value: 'item',
      created_at: '2026-01-02T00:00:00.000Z',
      updated_at: '2026-01-02T00:00:00.000Z',
    });
  });

  it('answers a version published through /v1 as it is, its variables without fallbacks', function () {
    const got = resendTemplate(template, info({}));
    expect(got).to.deep.include({ subject: "Order of {{ PRODUCT | 'item' }}", html: '<p>{{ PRODUCT }}</p>' });
    expect(got.variables).to.deep.equal([
      {
        key: 'PRODUCT',
        type: 'string',
        fallback_value: null,
        created_at: '2026-01-02T00:00:00.000Z',
        updated_at: '2026-01-02T00:00:00.000Z',
      },
    ]);
    expect(sourceOf(info({})).variables).to.equal(null);
  });

  context('paging a list held whole', function () {
    const items = ['e', 'd', 'c', 'b', 'a'].map((id) => ({ id }));
    const ids = (p: { items: Array<{ id: string }> }) => p.items.map((x) => x.id);

    it('pages older with after and newer with before, saying whether more follow', function () {
      expect(pageOf(items, { limit: 2 })).to.deep.equal({ items: [{ id: 'e' }, { id: 'd' }], hasMore: true });
      expect(ids(pageOf(items, { limit: 2, after: 'd' }))).to.deep.equal(['c', 'b']);
      expect(pageOf(items, { limit: 2, after: 'b' }).hasMore).to.equal(false);
      expect(pageOf(items, { limit: 5 }).hasMore).to.equal(false);
      expect(pageOf(items, { limit: 2, before: 'b' })).to.deep.equal({
        items: [{ id: 'd' }, { id: 'c' }],
        hasMore: true,
      });
      expect(pageOf(items, { limit: 2, before: 'c' })).to.deep.equal({
        items: [{ id: 'e' }, { id: 'd' }],
        hasMore: false,
      });
    });

    it('refuses a cursor the list does not hold, and both cursors at once', function () {
      expect(thrownApiError(() => pageOf(items, { limit: 2, after: 'zz' })).field).to.equal('after');
      expect(thrownApiError(() => pageOf(items, { limit: 2, after: 'a', before: 'b' })).field).to.equal('before');
    });
  });
});
