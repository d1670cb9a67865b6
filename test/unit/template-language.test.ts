import { expect } from 'chai';
import {
  TemplateError,
  checkVariables,
  compileCondition,
  compileTemplate,
  renderTemplate,
  RenderTooLarge,
  type Declared,
  type VariableSpec,
  type VariableType,
} from '../../src/modules/sending/templates/language/index.js';

/** A render case: `source` compiled as `html` (html: true) or `text`, rendered with `vars`. */
interface RenderCase {
  name: string;
  source: string;
  vars: Record<string, unknown>;
  declared?: Declared;
  html?: boolean;
  language?: string | null;
  expect: string;
}

/** A compile error case: `source` compiled (as a template, or as a condition) must throw at field/line/column. */
interface ErrorCase {
  name: string;
  source: string;
  field: string;
  line: number;
  column: number;
  reason: RegExp;
  declared?: Declared;
  condition?: boolean;
}

const NBSP = '\u00a0';
const NNBSP = '\u202f';

/** Roots the cases use without always giving a value, with a type that fits how they are used. */
const COMMON: Record<string, VariableType> = {
  missing: 'string',
  x: 'string',
  y: 'string',
  s: 'string',
  name: 'string',
  url: 'string',
  plan: 'string',
  d: 'string',
  n: 'number',
  flag: 'boolean',
  a: 'boolean',
  b: 'boolean',
  c: 'boolean',
  items: 'array',
  list: 'array',
  groups: 'array',
  user: 'object',
  item: 'string',
};

function typeOf(value: unknown): VariableType {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'boolean';
  if (value !== null && typeof value === 'object') return 'object';
  return 'string';
}

/** Permissive declarations: every COMMON root plus every root given a value, all optional. */
function declaredFor(vars: Record<string, unknown> = {}): Declared {
  const out: Declared = {};
  for (const [k, type] of Object.entries(COMMON)) out[k] = { type, required: false };
  for (const [k, v] of Object.entries(vars)) out[k] = { type: typeOf(v), required: false };
  return out;
}

const decl = (...names: string[]): Declared =>
  Object.fromEntries(names.map((n) => [n, { type: 'string', required: false }]));

function render(c: RenderCase): string {
  const t = compileTemplate(c.source, c.html ? 'html' : 'text', c.declared ?? declaredFor(c.vars));
  const options = c.language === undefined ? { html: !!c.html } : { html: !!c.html, language: c.language };
  return renderTemplate(t, c.vars, options);
}

function runRenderTable(cases: RenderCase[]) {
  for (const c of cases) {
    it(`${c.name}: ${JSON.stringify(c.source)}${c.language !== undefined ? ` [${c.language}]` : ''} → ${JSON.stringify(c.expect)}`, function () {
      expect(render(c)).to.equal(c.expect);
    });
  }
}

describe('template language', function () {
  context('placeholders and values', function () {
    runRenderTable([
      {
        name: 'plain text is unchanged',
        source: 'Hello, world! { not a tag } }',
        vars: {},
        expect: 'Hello, world! { not a tag } }',
      },
      { name: 'a placeholder', source: 'Hello {{name}}!', vars: { name: 'Ada' }, expect: 'Hello Ada!' },
      {
        name: 'spaces inside the braces',
        source: 'Hello {{   name   }}!',
        vars: { name: 'Ada' },
        expect: 'Hello Ada!',
      },
      { name: 'adjacent placeholders', source: '{{x}}{{y}}', vars: { x: 'a', y: 'b' }, expect: 'ab' },
      {
        name: 'a path into objects',
        source: '{{user.address.city}}',
        vars: { user: { address: { city: 'Paris' } } },
        expect: 'Paris',
      },
      {
        name: 'a numeric segment indexes an array',
        source: '{{items.1.name}}',
        vars: { items: [{ name: 'A' }, { name: 'B' }] },
        expect: 'B',
      },
      {
        name: 'an index out of range inserts nothing',
        source: '[{{items.5.name}}]',
        vars: { items: [{ name: 'A' }] },
        expect: '[]',
      },
      { name: 'a missing value inserts nothing', source: '[{{missing}}]', vars: {}, expect: '[]' },
      { name: 'a null value inserts nothing', source: '[{{x}}]', vars: { x: null }, expect: '[]' },
      {
        name: 'a path through a missing object inserts nothing',
        source: '[{{user.nope.deep}}]',
        vars: { user: {} },
        expect: '[]',
      },
      {
        name: 'a number inserts as String(n), no locale',
        source: '{{n}}',
        vars: { n: 1234567.5 },
        language: 'de',
        expect: '1234567.5',
      },
      { name: 'zero inserts as 0', source: '{{n}}', vars: { n: 0 }, expect: '0' },
      {
        name: 'booleans insert as true/false',
        source: '{{a}}/{{b}}',
        vars: { a: true, b: false },
        expect: 'true/false',
      },
      {
        name: 'arrays join with a comma and a space',
        source: '{{list}}',
        vars: { list: ['a', 'b', 'c'] },
        expect: 'a, b, c',
      },
      { name: 'unicode text is kept', source: 'Grüße, {{name}} 👋', vars: { name: 'Zoë' }, expect: 'Grüße, Zoë 👋' },
      {
        name: 'text mode inserts as-is',
        source: 'S: {{x}}',
        vars: { x: `<b>Tom & "Jerry's"</b>` },
        expect: `S: <b>Tom & "Jerry's"</b>`,
      },
    ]);
  });

  context('escaping in html', function () {
    runRenderTable([
      {
        name: 'all five characters escaped in text content',
        html: true,
        source: '<p>{{x}}</p>',
        vars: { x: `<script>alert("x") & 'y'</script>` },
        expect: '<p>&lt;script&gt;alert(&quot;x&quot;) &amp; &#39;y&#39;&lt;/script&gt;</p>',
      },
      {
        name: 'escaped inside an attribute value',
        html: true,
        source: '<a href="{{url}}" title=\'{{x}}\'>go</a>',
        vars: { url: 'https://e.example/?a=1&b="2"', x: "it's" },
        expect: '<a href="https://e.example/?a=1&amp;b=&quot;2&quot;" title=\'it&#39;s\'>go</a>',
      },
      {
        name: 'literal template text is never escaped',
        html: true,
        source: `<b>Tom & Jerry's "show" <3</b>`,
        vars: {},
        expect: `<b>Tom & Jerry's "show" <3</b>`,
      },
      {
        name: 'array items escaped after joining',
        html: true,
        source: '{{list}}',
        vars: { list: ['<a>', 'b&c'] },
        expect: '&lt;a&gt;, b&amp;c',
      },
      {
        name: 'a filter result is escaped',
        html: true,
        source: '{{x | upper}}',
        vars: { x: 'a&b<c' },
        expect: 'A&amp;B&lt;C',
      },
      {
        name: 'loop items are escaped',
        html: true,
        source: '<ul>{{#each items as i}}<li>{{i.name}}</li>{{/each}}</ul>',
        vars: { items: [{ name: 'A&B' }, { name: '"C"' }] },
        expect: '<ul><li>A&amp;B</li><li>&quot;C&quot;</li></ul>',
      },
      {
        name: 'an already escaped value is escaped again',
        html: true,
        source: '{{x}}',
        vars: { x: '&amp;' },
        expect: '&amp;amp;',
      },
    ]);
  });

  context('fallbacks', function () {
    runRenderTable([
      { name: 'a bare fallback for a missing value', source: 'Hi {{name | friend}}', vars: {}, expect: 'Hi friend' },
      {
        name: 'a bare fallback of several words',
        source: 'Dear {{n | dear customer}}',
        vars: {},
        expect: 'Dear dear customer',
      },
      { name: 'a single-quoted fallback', source: "{{name | 'good friend'}}", vars: {}, expect: 'good friend' },
      { name: 'a double-quoted fallback', source: '{{name | "pal"}}', vars: { name: null }, expect: 'pal' },
      { name: 'a quoted fallback may hold a pipe', source: "{{name | 'a | b'}}", vars: {}, expect: 'a | b' },
      { name: 'the fallback for an empty string', source: "{{name | 'none'}}", vars: { name: '' }, expect: 'none' },
      { name: 'no fallback for 0', source: "{{n | 'none'}}", vars: { n: 0 }, expect: '0' },
      { name: 'no fallback for false', source: "{{flag | 'none'}}", vars: { flag: false }, expect: 'false' },
      { name: 'no fallback for a present value', source: '{{name | friend}}', vars: { name: 'Ada' }, expect: 'Ada' },
      {
        name: 'filters pass a missing value through to the fallback',
        source: "{{x | upper | 'none'}}",
        vars: {},
        expect: 'none',
      },
      { name: 'a fallback then a filter', source: "{{x | 'none' | upper}}", vars: {}, expect: 'NONE' },
      {
        name: 'a fallback then a filter, value present',
        source: "{{x | 'none' | upper}}",
        vars: { x: 'abc' },
        expect: 'ABC',
      },
      {
        name: 'a filter producing the empty string takes the fallback',
        source: "{{x | trim | 'blank'}}",
        vars: { x: '   ' },
        expect: 'blank',
      },
      {
        name: 'a date filter on a missing value then a fallback',
        source: "{{d | date:'long' | 'TBD'}}",
        vars: {},
        expect: 'TBD',
      },
      {
        name: 'an apostrophe in a bare fallback is a letter, and the tag still ends at its }}',
        source: "{{name | it's me}} and {{#if plan == 'pro'}}PRO{{/if}}",
        vars: { plan: 'pro' },
        expect: "it's me and PRO",
      },
      {
        name: 'an apostrophe in a bare fallback does not hide the next pipe',
        source: "{{name | don't | upper}}",
        vars: {},
        expect: "DON'T",
      },
    ]);
  });

  context('text filters, in two languages', function () {
    const cases: RenderCase[] = [];
    for (const language of ['en', 'de']) {
      cases.push(
        { name: 'upper', source: '{{x | upper}}', vars: { x: 'Ada Lovelace' }, language, expect: 'ADA LOVELACE' },
        { name: 'lower', source: '{{x | lower}}', vars: { x: 'HeLLo WORLD' }, language, expect: 'hello world' },
        {
          name: 'capitalize upper-cases only the first character',
          source: '{{x | capitalize}}',
          vars: { x: 'élan wORLD' },
          language,
          expect: 'Élan wORLD',
        },
        { name: 'trim', source: '[{{x | trim}}]', vars: { x: '  hi there \n' }, language, expect: '[hi there]' },
        {
          name: 'truncate shortens and adds an ellipsis',
          source: '{{x | truncate:5}}',
          vars: { x: 'Hello world' },
          language,
          expect: 'Hello…',
        },
        {
          name: 'truncate removes trailing whitespace before the ellipsis',
          source: '{{x | truncate:6}}',
          vars: { x: 'Hello world' },
          language,
          expect: 'Hello…',
        },
        {
          name: 'truncate leaves a string of exactly N characters',
          source: '{{x | truncate:11}}',
          vars: { x: 'Hello world' },
          language,
          expect: 'Hello world',
        },
        {
          name: 'trim then upper, left to right',
          source: '[{{x | trim | upper}}]',
          vars: { x: ' ab ' },
          language,
          expect: '[AB]',
        },
      );
    }
    runRenderTable(cases);
  });

  context('the url filter: encodeURIComponent of the value, in every part', function () {
    runRenderTable([
      {
        name: 'reserved characters and spaces in text',
        source: '{{ name | url }}',
        vars: { name: 'Ann & Bob?x=1' },
        expect: 'Ann%20%26%20Bob%3Fx%3D1',
      },
      {
        name: 'in a query of an html link, then escaped for html (nothing left to escape)',
        html: true,
        source: '<a href="https://x.test/?u={{ name | url }}">',
        vars: { name: 'Ann & Bob?x=1' },
        expect: '<a href="https://x.test/?u=Ann%20%26%20Bob%3Fx%3D1">',
      },
      {
        name: 'a quote, which encodeURIComponent keeps, is then escaped for html',
        html: true,
        source: '{{ x | url }}',
        vars: { x: `it's <b>` },
        expect: 'it&#39;s%20%3Cb%3E',
      },
      {
        name: 'slashes, # and non-ASCII as UTF-8',
        source: '{{ x | url }}',
        vars: { x: 'a/b#c é€' },
        expect: 'a%2Fb%23c%20%C3%A9%E2%82%AC',
      },
      { name: 'a number', source: '{{ n | url }}', vars: { n: 12.5 }, expect: '12.5' },
      {
        name: 'a lone surrogate becomes U+FFFD instead of failing the render',
        source: '{{ x | url }}',
        vars: { x: 'a\ud800b' },
        expect: 'a%EF%BF%BDb',
      },
      {
        name: 'a missing value passes on to the fallback, which is not encoded',
        source: "{{ x | url | 'a b' }}",
        vars: {},
        expect: 'a b',
      },
      { name: 'a fallback before it is encoded', source: "{{ x | 'a b' | url }}", vars: {}, expect: 'a%20b' },
      { name: 'after another filter', source: '{{ x | trim | lower | url }}', vars: { x: ' A&B ' }, expect: 'a%26b' },
    ]);
    it('in a subject, as a send renders it', function () {
      expect(
        renderTemplate(compileTemplate('Re: {{ q | url }}', 'subject', decl('q')), { q: 'a b' }, { html: false }),
      ).to.equal('Re: a%20b');
    });
  });

  context('number and currency filters', function () {
    runRenderTable([
      {
        name: 'number in en',
        source: '{{n | number}}',
        vars: { n: 1234567.891 },
        language: 'en',
        expect: '1,234,567.891',
      },
      {
        name: 'number in de',
        source: '{{n | number}}',
        vars: { n: 1234567.891 },
        language: 'de',
        expect: '1.234.567,891',
      },
      {
        name: 'number in fr (narrow no-break spaces)',
        source: '{{n | number}}',
        vars: { n: 1234567.891 },
        language: 'fr',
        expect: `1${NNBSP}234${NNBSP}567,891`,
      },
      {
        name: 'number in pt-BR',
        source: '{{n | number}}',
        vars: { n: 1234567.891 },
        language: 'pt-BR',
        expect: '1.234.567,891',
      },
      {
        name: 'number with no language is en',
        source: '{{n | number}}',
        vars: { n: 1234567.891 },
        expect: '1,234,567.891',
      },
      {
        name: 'number with a null language is en',
        source: '{{n | number}}',
        vars: { n: 1234567.891 },
        language: null,
        expect: '1,234,567.891',
      },
      { name: 'number:2 in en', source: '{{n | number:2}}', vars: { n: 1234.5 }, language: 'en', expect: '1,234.50' },
      { name: 'number:2 in de', source: '{{n | number:2}}', vars: { n: 1234.5 }, language: 'de', expect: '1.234,50' },
      { name: 'number:0 rounds', source: '{{n | number:0}}', vars: { n: 1234.5 }, language: 'en', expect: '1,235' },
      {
        name: 'number on a value it cannot read',
        source: '{{x | number}}',
        vars: { x: 'abc' },
        language: 'en',
        expect: 'abc',
      },
      {
        name: "currency:'EUR' in en",
        source: "{{n | currency:'EUR'}}",
        vars: { n: 1234.5 },
        language: 'en',
        expect: '€1,234.50',
      },
      {
        name: "currency:'EUR' in de",
        source: "{{n | currency:'EUR'}}",
        vars: { n: 1234.5 },
        language: 'de',
        expect: `1.234,50${NBSP}€`,
      },
      {
        name: "currency:'EUR' in pt-BR",
        source: "{{n | currency:'EUR'}}",
        vars: { n: 1234.5 },
        language: 'pt-BR',
        expect: `€${NBSP}1.234,50`,
      },
      {
        name: 'bare currency is USD in en',
        source: '{{n | currency}}',
        vars: { n: 1234.5 },
        language: 'en',
        expect: '$1,234.50',
      },
      {
        name: 'bare currency is USD in de',
        source: '{{n | currency}}',
        vars: { n: 1234.5 },
        language: 'de',
        expect: `1.234,50${NBSP}$`,
      },
      {
        name: 'currency on a value it cannot read',
        source: "{{x | currency:'EUR'}}",
        vars: { x: 'n/a' },
        language: 'de',
        expect: 'n/a',
      },
      {
        name: 'currency in html',
        html: true,
        source: "<b>{{n | currency:'USD'}}</b>",
        vars: { n: 5 },
        language: 'en',
        expect: '<b>$5.00</b>',
      },
    ]);
  });

  context('date filters', function () {
    const day = '2024-03-05T23:30:00Z';
    runRenderTable([
      { name: 'date is medium, en', source: '{{d | date}}', vars: { d: day }, language: 'en', expect: 'Mar 5, 2024' },
      { name: 'date is medium, de', source: '{{d | date}}', vars: { d: day }, language: 'de', expect: '05.03.2024' },
      { name: "date:'short' en", source: "{{d | date:'short'}}", vars: { d: day }, language: 'en', expect: '3/5/24' },
      { name: "date:'short' de", source: "{{d | date:'short'}}", vars: { d: day }, language: 'de', expect: '05.03.24' },
      {
        name: "date:'medium' fr",
        source: "{{d | date:'medium'}}",
        vars: { d: day },
        language: 'fr',
        expect: '5 mars 2024',
      },
      {
        name: "date:'long' en",
        source: "{{d | date:'long'}}",
        vars: { d: day },
        language: 'en',
        expect: 'March 5, 2024',
      },
      {
        name: "date:'long' de",
        source: "{{d | date:'long'}}",
        vars: { d: day },
        language: 'de',
        expect: '5. März 2024',
      },
      {
        name: 'a plain ISO date',
        source: '{{d | date}}',
        vars: { d: '2024-12-31' },
        language: 'en',
        expect: 'Dec 31, 2024',
      },
      {
        name: 'an offset date-time is shown in UTC',
        source: '{{d | date}}',
        vars: { d: '2024-03-05T23:30:00-02:00' },
        language: 'en',
        expect: 'Mar 6, 2024',
      },
      {
        name: 'epoch milliseconds',
        source: '{{d | date}}',
        vars: { d: 1709681400000 },
        language: 'de',
        expect: '05.03.2024',
      },
      {
        name: "a pattern 'YYYY-MM-DD'",
        source: "{{d | date:'YYYY-MM-DD'}}",
        vars: { d: day },
        language: 'de',
        expect: '2024-03-05',
      },
      {
        name: 'a pattern with time, UTC',
        source: "{{d | date:'DD.MM.YYYY HH:mm:ss'}}",
        vars: { d: '2024-03-05T07:08:09+01:00' },
        language: 'en',
        expect: '05.03.2024 06:08:09',
      },
      {
        name: 'date on a value it cannot read',
        source: '{{d | date}}',
        vars: { d: 'soon' },
        language: 'en',
        expect: 'soon',
      },
    ]);
  });

  context('conditions', function () {
    const ifFlag = '{{#if flag}}yes{{else}}no{{/if}}';
    const falsy: Array<[string, Record<string, unknown>]> = [
      ['missing', {}],
      ['null', { flag: null }],
      ['false', { flag: false }],
      ["''", { flag: '' }],
      ['0', { flag: 0 }],
      ['[]', { flag: [] }],
    ];
    const truthy: Array<[string, Record<string, unknown>]> = [
      ['true', { flag: true }],
      ["'0'", { flag: '0' }],
      ['1', { flag: 1 }],
      ['[0]', { flag: [0] }],
      ['{}', { flag: {} }],
    ];
    const d = declaredFor();
    runRenderTable([
      ...falsy.map(([label, vars]): RenderCase => ({
        name: `${label} is false`,
        source: ifFlag,
        vars,
        declared: d,
        expect: 'no',
      })),
      ...truthy.map(([label, vars]): RenderCase => ({
        name: `${label} is true`,
        source: ifFlag,
        vars,
        declared: d,
        expect: 'yes',
      })),
      { name: 'if without else, false', source: '[{{#if flag}}yes{{/if}}]', vars: { flag: false }, expect: '[]' },
      { name: '!path', source: '{{#if !flag}}off{{else}}on{{/if}}', vars: {}, expect: 'off' },
      {
        name: '== a quoted string',
        source: "{{#if plan == 'pro'}}P{{else}}F{{/if}}",
        vars: { plan: 'pro' },
        expect: 'P',
      },
      {
        name: '== a double-quoted string, no match',
        source: '{{#if plan == "pro"}}P{{else}}F{{/if}}',
        vars: { plan: 'free' },
        expect: 'F',
      },
      { name: '!= a string', source: "{{#if plan != 'pro'}}P{{else}}F{{/if}}", vars: { plan: 'free' }, expect: 'P' },
      {
        name: '== compares numbers numerically',
        source: '{{#if n == 5.0}}Y{{else}}N{{/if}}',
        vars: { n: 5 },
        expect: 'Y',
      },
      {
        name: '== compares a string value with the literal text',
        source: '{{#if x == 5}}Y{{else}}N{{/if}}',
        vars: { x: '5' },
        expect: 'Y',
      },
      {
        name: '== true on a boolean',
        source: '{{#if flag == true}}Y{{else}}N{{/if}}',
        vars: { flag: true },
        expect: 'Y',
      },
      {
        name: '== false on a boolean',
        source: '{{#if flag == false}}Y{{else}}N{{/if}}',
        vars: { flag: true },
        expect: 'N',
      },
      { name: '== null matches missing', source: '{{#if x == null}}Y{{else}}N{{/if}}', vars: {}, expect: 'Y' },
      { name: '== null matches null', source: '{{#if x == null}}Y{{else}}N{{/if}}', vars: { x: null }, expect: 'Y' },
      { name: "== null does not match ''", source: '{{#if x == null}}Y{{else}}N{{/if}}', vars: { x: '' }, expect: 'N' },
      { name: '!= null on a value', source: '{{#if x != null}}Y{{else}}N{{/if}}', vars: { x: 'a' }, expect: 'Y' },
      { name: '> numbers', source: '{{#if n > 10}}Y{{else}}N{{/if}}', vars: { n: 11 }, expect: 'Y' },
      {
        name: '> a numeric string compares numerically',
        source: '{{#if x > 10}}Y{{else}}N{{/if}}',
        vars: { x: '9' },
        expect: 'N',
      },
      { name: '>= equal', source: '{{#if n >= 10}}Y{{else}}N{{/if}}', vars: { n: 10 }, expect: 'Y' },
      { name: '< equal', source: '{{#if n < 10}}Y{{else}}N{{/if}}', vars: { n: 10 }, expect: 'N' },
      { name: '<= equal', source: '{{#if n <= 10}}Y{{else}}N{{/if}}', vars: { n: 10 }, expect: 'Y' },
      { name: '> a negative literal', source: '{{#if n > -1}}Y{{else}}N{{/if}}', vars: { n: 0 }, expect: 'Y' },
      {
        name: 'ISO dates compare in string order',
        source: "{{#if d > '2024-01-01'}}Y{{else}}N{{/if}}",
        vars: { d: '2024-03-05' },
        expect: 'Y',
      },
      {
        name: 'ISO dates compare in string order, earlier',
        source: "{{#if d >= '2024-01-01'}}Y{{else}}N{{/if}}",
        vars: { d: '2023-12-31' },
        expect: 'N',
      },
      { name: 'a missing value makes > false', source: '{{#if n > 0}}Y{{else}}N{{/if}}', vars: {}, expect: 'N' },
      { name: 'a missing value makes < false', source: '{{#if n < 0}}Y{{else}}N{{/if}}', vars: {}, expect: 'N' },
      {
        name: 'a path in a condition',
        source: "{{#if user.plan == 'pro'}}Y{{else}}N{{/if}}",
        vars: { user: { plan: 'pro' } },
        expect: 'Y',
      },
      {
        name: 'and binds tighter than or (a or (b and c))',
        source: '{{#if a or b and c}}Y{{else}}N{{/if}}',
        vars: { a: true, b: false, c: false },
        expect: 'Y',
      },
      {
        name: 'and binds tighter than or ((a and b) or c)',
        source: '{{#if a and b or c}}Y{{else}}N{{/if}}',
        vars: { a: false, b: true, c: true },
        expect: 'Y',
      },
      {
        name: 'and with comparisons',
        source: "{{#if plan == 'pro' and n >= 3}}Y{{else}}N{{/if}}",
        vars: { plan: 'pro', n: 2 },
        expect: 'N',
      },
      {
        name: 'or with negation',
        source: '{{#if !a or b}}Y{{else}}N{{/if}}',
        vars: { a: true, b: false },
        expect: 'N',
      },
    ]);
    const chain = "{{#if plan == 'pro'}}P{{else if plan == 'team'}}T{{else if n > 1}}N{{else}}F{{/if}}";
    runRenderTable([
      { name: 'else if: first branch', source: chain, vars: { plan: 'pro', n: 5 }, expect: 'P' },
      { name: 'else if: second branch', source: chain, vars: { plan: 'team', n: 5 }, expect: 'T' },
      { name: 'else if: third branch', source: chain, vars: { plan: 'free', n: 5 }, expect: 'N' },
      { name: 'else if: else branch', source: chain, vars: { plan: 'free', n: 0 }, expect: 'F' },
      {
        name: 'nested conditions',
        source: '{{#if a}}A{{#if b}}B{{else}}b{{/if}}{{else}}x{{/if}}',
        vars: { a: true, b: false },
        expect: 'Ab',
      },
    ]);
  });

  context('loops', function () {
    const groups = [
      { name: 'G1', members: ['a', 'b'] },
      { name: 'G2', members: ['c'] },
    ];
    runRenderTable([
      {
        name: 'each over strings',
        source: '{{#each items as item}}{{item}};{{/each}}',
        vars: { items: ['a', 'b'] },
        expect: 'a;b;',
      },
      {
        name: 'each over objects',
        source: '{{#each items as i}}<{{i.name}}>{{/each}}',
        vars: { items: [{ name: 'A' }, { name: 'B' }] },
        expect: '<A><B>',
      },
      {
        name: '@index, @last in a condition',
        source: '{{#each items as i}}{{@index}}:{{i}}{{#if !@last}}, {{/if}}{{/each}}',
        vars: { items: ['a', 'b', 'c'] },
        expect: '0:a, 1:b, 2:c',
      },
      {
        name: '@first and @last insert as booleans',
        source: '{{#each items as i}}{{@first}}/{{@last}} {{/each}}',
        vars: { items: ['a', 'b'] },
        expect: 'true/false false/true ',
      },
      {
        name: '@first in a condition',
        source: '{{#each items as i}}{{#if @first}}[{{/if}}{{i}}{{/each}}]',
        vars: { items: ['a', 'b'] },
        expect: '[ab]',
      },
      {
        name: 'else when the list is empty',
        source: '{{#each items as i}}{{i}}{{else}}none{{/each}}',
        vars: { items: [] },
        expect: 'none',
      },
      {
        name: 'else when the list is missing',
        source: '{{#each items as i}}{{i}}{{else}}none{{/each}}',
        vars: {},
        expect: 'none',
      },
      {
        name: 'else when the list is not an array',
        source: '{{#each items as i}}{{i}}{{else}}none{{/each}}',
        vars: { items: 'abc' },
        declared: declaredFor(),
        expect: 'none',
      },
      {
        name: 'nested loops; @index is the innermost',
        source: '{{#each groups as g}}{{g.name}}({{#each g.members as m}}{{@index}}{{m}}{{/each}}){{/each}}',
        vars: { groups },
        expect: 'G1(0a1b)G2(0c)',
      },
      {
        name: '@index returns to the outer loop after the inner one',
        source: '{{#each groups as g}}{{#each g.members as m}}{{/each}}{{@index}}{{/each}}',
        vars: { groups },
        expect: '01',
      },
      {
        name: 'an alias shadows a variable inside the loop only',
        source: '{{item}}-{{#each items as item}}{{item}}{{/each}}-{{item}}',
        vars: { item: 'outer', items: ['a', 'b'] },
        expect: 'outer-ab-outer',
      },
      {
        name: 'outer variables are visible inside a loop',
        source: '{{#each items as i}}{{name}}{{i}} {{/each}}',
        vars: { name: '>', items: ['a', 'b'] },
        expect: '>a >b ',
      },
      {
        name: 'a condition on the alias',
        source: '{{#each items as i}}{{i.name}}{{#if i.vip}}*{{/if}} {{/each}}',
        vars: { items: [{ name: 'A', vip: true }, { name: 'B' }] },
        expect: 'A* B ',
      },
      {
        name: 'a loop inside a condition',
        source: '{{#if flag}}{{#each items as i}}{{i}}{{/each}}{{/if}}',
        vars: { flag: true, items: [1, 2] },
        expect: '12',
      },
      {
        name: 'loop aliases and @-variables need no declaration',
        source: '{{#each items as i}}{{@index}}{{i.name}}{{/each}}',
        vars: { items: [{ name: 'A' }] },
        declared: { items: { type: 'array', required: true } },
        expect: '0A',
      },
      {
        name: 'a filter on a loop item',
        source: '{{#each items as i}}{{i | upper}}{{/each}}',
        vars: { items: ['a', 'b'] },
        expect: 'AB',
      },
    ]);
  });

  context('standalone block lines', function () {
    const ifBlock = 'Hello\n{{#if flag}}\nPro line\n{{/if}}\nBye';
    const ifElse = 'X\n  {{#if flag}}  \nA\n{{else}}\nB\n\t{{/if}}\nY';
    const each = 'Items:\n{{#each items as i}}\n- {{i}}\n{{else}}\nnone\n{{/each}}\nTotal';
    const nested =
      "Hi {{name}},\n{{#each items as i}}\n  {{#if i.vip}}\n* {{i.name}} (VIP)\n  {{else if i.name == 'C'}}\n+ C\n  {{else}}\n- {{i.name}}\n  {{/if}}\n{{/each}}\nThanks";
    runRenderTable([
      { name: 'if lines disappear (true)', source: ifBlock, vars: { flag: true }, expect: 'Hello\nPro line\nBye' },
      { name: 'if lines disappear (false)', source: ifBlock, vars: { flag: false }, expect: 'Hello\nBye' },
      { name: 'indented block lines and else disappear', source: ifElse, vars: { flag: false }, expect: 'X\nB\nY' },
      {
        name: 'a last line without a newline',
        source: '{{#if flag}}\nA\n{{/if}}',
        vars: { flag: true },
        expect: 'A\n',
      },
      { name: 'each lines disappear', source: each, vars: { items: ['a', 'b'] }, expect: 'Items:\n- a\n- b\nTotal' },
      { name: 'each else lines disappear', source: each, vars: { items: [] }, expect: 'Items:\nnone\nTotal' },
      {
        name: 'nested standalone lines',
        source: nested,
        vars: { name: 'Ada', items: [{ name: 'A', vip: true }, { name: 'B' }, { name: 'C' }] },
        expect: 'Hi Ada,\n* A (VIP)\n- B\n+ C\nThanks',
      },
      {
        name: 'inline block tags keep their text',
        source: 'a {{#if flag}}b{{/if}} c\nd',
        vars: { flag: false },
        expect: 'a  c\nd',
      },
      {
        name: 'a line with a tag and text is not standalone',
        source: 'x\n{{#if flag}}y\n{{/if}}z',
        vars: { flag: true },
        expect: 'x\ny\nz',
      },
      { name: 'a placeholder line is not standalone', source: 'a\n{{missing}}\nb', vars: {}, expect: 'a\n\nb' },
    ]);
  });

  context('compile errors', function () {
    const never = /never closed|unclosed|not closed/i;
    const undeclared = (name: string) => new RegExp(`(?=.*${name})(?=.*declared)`, 'i');
    const cases: ErrorCase[] = [
      {
        name: '{{ never closed',
        source: 'Hello\nthere\nDear {{name\nBye',
        field: 'text',
        line: 3,
        column: 6,
        reason: never,
      },
      {
        name: '{{ never closed in a subject',
        source: 'Hi {{name',
        field: 'subject',
        line: 1,
        column: 4,
        reason: never,
      },
      { name: 'an empty tag', source: 'a\nb\nx {{ }} y', field: 'text', line: 3, column: 3, reason: /empty/i },
      {
        name: '{{#if}} never closed (the example)',
        source: 'l1\nl2\nl3\n<p>Hi customer, {{#if flag}}yes</p>',
        field: 'html',
        line: 4,
        column: 17,
        reason: /if.*never closed|never closed/i,
      },
      {
        name: '{{#each}} never closed',
        source: 'a\nb\nc\n  {{#each items as i}}{{i}}',
        field: 'html',
        line: 4,
        column: 3,
        reason: never,
      },
      {
        name: '{{/if}} without an opening',
        source: 'a\nb\n  x {{/if}}',
        field: 'text',
        line: 3,
        column: 5,
        reason: /without|no open|unexpected|not open|nothing to close/i,
      },
      {
        name: '{{/each}} closing an {{#if}}',
        source: 'a\nb\nc {{#if flag}}x{{/each}}',
        field: 'html',
        line: 3,
        column: 16,
        reason: /each/i,
      },
      {
        name: '{{else}} outside a block',
        source: 'a\nb\nxy {{else}}',
        field: 'text',
        line: 3,
        column: 4,
        reason: /else/i,
      },
      {
        name: 'a second {{else}}',
        source: '{{#if flag}}\na\n{{else}}\nb\n c{{else}}\n{{/if}}',
        field: 'text',
        line: 5,
        column: 3,
        reason: /else/i,
      },
      {
        name: '{{else if}} after {{else}}',
        source: '{{#if a}}\n1\n{{else}}2 {{else if b}}3\n{{/if}}',
        field: 'text',
        line: 3,
        column: 11,
        reason: /else/i,
      },
      {
        name: '{{else if}} inside {{#each}}',
        source: 'x\ny\n{{#each items as i}}{{else if a}}{{/each}}',
        field: 'html',
        line: 3,
        column: 21,
        reason: /else if|each/i,
      },
      {
        name: 'an unknown block',
        source: 'a\nb\nc {{#unless flag}}x{{/unless}}',
        field: 'html',
        line: 3,
        column: 3,
        reason: /unless|unknown/i,
      },
      {
        name: '{{#if}} without a condition',
        source: 'a\nb\n  {{#if}}x{{/if}}',
        field: 'html',
        line: 3,
        column: 3,
        reason: /condition/i,
      },
      {
        name: '{{#each items}} without as',
        source: 'a\nb\nc {{#each items}}x{{/each}}',
        field: 'html',
        line: 3,
        column: 3,
        reason: /\bas\b|alias/i,
      },
      {
        name: 'a bad alias',
        source: 'a\nb\nc {{#each items as 1x}}{{/each}}',
        field: 'html',
        line: 3,
        column: 20,
        reason: /alias|name/i,
      },
      {
        name: 'a bad path a..b',
        source: 'x\ny\nz {{ user..name }}',
        field: 'text',
        line: 3,
        column: 6,
        reason: /path/i,
      },
      { name: 'a bad path 1abc', source: '\n\n{{ 1abc }}', field: 'text', line: 3, column: 4, reason: /path|name/i },
      { name: 'a bad path a.', source: 'a\nb\nc{{user.}}', field: 'text', line: 3, column: 4, reason: /path/i },
      {
        name: 'an undeclared variable',
        source: 'Hi\nthere\nDear {{ customer.name }}',
        field: 'html',
        line: 3,
        column: 9,
        reason: undeclared('customer'),
      },
      {
        name: 'an undeclared variable in a condition',
        source: 'a\nb\nc {{#if vip}}x{{/if}}',
        field: 'html',
        line: 3,
        column: 9,
        reason: undeclared('vip'),
      },
      {
        name: 'an undeclared variable after and',
        source: 'a\nb\n{{#if flag and vip}}x{{/if}}',
        field: 'html',
        line: 3,
        column: 16,
        reason: undeclared('vip'),
      },
      {
        name: 'an undeclared each list',
        source: 'a\nb\n{{#each orders as o}}{{o}}{{/each}}',
        field: 'html',
        line: 3,
        column: 9,
        reason: undeclared('orders'),
      },
      {
        name: 'an alias out of its loop',
        source: 'a\nb\n{{#each items as i}}{{/each}} {{i}}',
        field: 'text',
        line: 3,
        column: 33,
        reason: undeclared('i'),
      },
      {
        name: 'columns count characters',
        source: 'a\nb\nGrüße {{ nobody }}',
        field: 'text',
        line: 3,
        column: 10,
        reason: undeclared('nobody'),
      },
      {
        name: 'the unescaped form',
        source: 'a\nb\nc {{{name}}}',
        field: 'html',
        line: 3,
        column: 3,
        reason: /unescaped|triple|\{\{\{/i,
      },
      {
        name: 'truncate without N',
        source: 'a\nb\n{{ name | truncate }}',
        field: 'text',
        line: 3,
        column: 11,
        reason: /truncate/i,
      },
      {
        name: 'truncate:0',
        source: 'a\nb\n{{ name | truncate:0 }}',
        field: 'text',
        line: 3,
        column: 11,
        reason: /truncate/i,
      },
      {
        name: 'truncate:-1',
        source: 'a\nb\n{{ name | upper | truncate:-1 }}',
        field: 'text',
        line: 3,
        column: 19,
        reason: /truncate/i,
      },
      {
        name: 'truncate:abc',
        source: 'a\nb\n{{ name | truncate:abc }}',
        field: 'text',
        line: 3,
        column: 11,
        reason: /truncate/i,
      },
      {
        name: "currency:'EURO'",
        source: "a\nb\nc\nTotal: {{ n | currency:'EURO' }}",
        field: 'html',
        line: 4,
        column: 15,
        reason: /currency/i,
      },
      {
        name: 'url takes no argument',
        source: "a\n{{ name | url:'x' }}",
        field: 'text',
        line: 2,
        column: 11,
        reason: /url takes no argument/,
      },
      {
        name: "{{#url}} belongs to the sources a design generates, not to an author's",
        source: 'a\n<a href="{{#url link}}x{{/url}}">',
        field: 'html',
        line: 2,
        column: 10,
        reason: /unknown block \{\{#url\}\}/,
      },
      {
        name: "date:'weekday'",
        source: "a\nb\n  {{ d | date:'weekday' }}",
        field: 'html',
        line: 3,
        column: 10,
        reason: /date/i,
      },
      {
        name: 'an unterminated quoted string',
        source: "a\nb\nc {{ name | 'friend }}",
        field: 'text',
        line: 3,
        column: 13,
        reason: /unterminated|quote|string/i,
      },
      {
        name: 'an unterminated quoted literal in a condition',
        source: "a\nb\n{{#if plan == 'pro}}x{{/if}}",
        field: 'html',
        line: 3,
        column: 15,
        reason: /unterminated|quote|string|never closed/i,
      },
      {
        name: 'a bare word literal',
        source: 'a\nb\nc {{#if plan == pro}}x{{/if}}',
        field: 'html',
        line: 3,
        column: 17,
        reason: /literal|quote|pro/i,
      },
      {
        name: '= instead of ==',
        source: "a\nb\n  {{#if plan = 'pro'}}x{{/if}}",
        field: 'html',
        line: 3,
        column: 14,
        reason: /=|operator|comparison/i,
      },
      {
        name: 'a dangling and',
        source: 'a\nb\nc {{#if flag and}}x{{/if}}',
        field: 'html',
        line: 3,
        column: 14,
        reason: /and|condition|expected/i,
      },
      {
        name: '@index outside a loop',
        source: 'a\nb\nRow {{@index}}',
        field: 'text',
        line: 3,
        column: 7,
        reason: /@index|loop/i,
      },
      {
        name: '@last outside a loop, in a condition',
        source: 'a\nb\nc {{#if !@last}}x{{/if}}',
        field: 'text',
        line: 3,
        column: 10,
        reason: /@last|loop/i,
      },
      {
        name: 'a condition: bare word literal',
        source: 'plan == pro',
        field: 'design.blocks[0].when',
        line: 1,
        column: 9,
        reason: /literal|quote|pro/i,
        condition: true,
      },
      {
        name: 'a condition: undeclared variable',
        source: "tier == 'gold'",
        field: 'design.blocks[1].when',
        line: 1,
        column: 1,
        reason: undeclared('tier'),
        condition: true,
      },
    ];
    for (const c of cases) {
      it(`${c.name}: ${JSON.stringify(c.source)} → ${c.field} line ${c.line}, column ${c.column}`, function () {
        const declared = c.declared ?? declaredFor();
        const compile = () =>
          c.condition ? compileCondition(c.source, c.field, declared) : compileTemplate(c.source, c.field, declared);
        let caught: unknown;
        try {
          compile();
        } catch (e) {
          caught = e;
        }
        expect(caught, 'a TemplateError').to.be.instanceOf(TemplateError);
        const err = caught as TemplateError;
        expect({ field: err.field, line: err.line, column: err.column }).to.deep.equal(
          { field: c.field, line: c.line, column: c.column },
          err.message,
        );
        expect(err.reason).to.match(c.reason);
        expect(err.message).to.equal(`${c.field} line ${c.line}, column ${c.column}: ${err.reason}`);
      });
    }

    it('a condition that is valid compiles', function () {
      expect(() =>
        compileCondition("plan == 'pro' and !flag or n >= 3", 'design.blocks[0].when', declaredFor()),
      ).not.to.throw();
    });
    it('a declared root makes its paths valid', function () {
      expect(() =>
        compileTemplate('{{user.name}} {{user.address.city}}', 'html', { user: { type: 'object', required: true } }),
      ).not.to.throw();
    });
    it('a template compiles without the declarations of roots it does not use', function () {
      expect(() => compileTemplate('Hello {{name}}', 'text', decl('name'))).not.to.throw();
    });
  });

  context('checkVariables at send', function () {
    const spec = (type: VariableType, required = true): VariableSpec => ({ type, required });
    const problems: Array<{
      name: string;
      declared: Declared;
      vars: Record<string, unknown>;
      variable: string;
      message?: RegExp;
    }> = [
      { name: 'a required variable missing', declared: { plan: spec('string') }, vars: {}, variable: 'plan' },
      { name: 'a required variable null', declared: { plan: spec('string') }, vars: { plan: null }, variable: 'plan' },
      {
        name: 'required by default',
        declared: { plan: { type: 'string' } as VariableSpec },
        vars: {},
        variable: 'plan',
      },
      {
        name: 'a number given a string',
        declared: { n: spec('number') },
        vars: { n: '5' },
        variable: 'n',
        message: /number/,
      },
      {
        name: 'a number given NaN',
        declared: { n: spec('number') },
        vars: { n: Number.NaN },
        variable: 'n',
        message: /number/,
      },
      {
        name: 'a number given Infinity',
        declared: { n: spec('number') },
        vars: { n: Number.POSITIVE_INFINITY },
        variable: 'n',
        message: /number/,
      },
      {
        name: 'a string given a number',
        declared: { s: spec('string') },
        vars: { s: 5 },
        variable: 's',
        message: /string/,
      },
      {
        name: 'a boolean given a string',
        declared: { flag: spec('boolean') },
        vars: { flag: 'true' },
        variable: 'flag',
        message: /boolean/,
      },
      {
        name: 'an array given an object',
        declared: { items: spec('array') },
        vars: { items: { 0: 'a' } },
        variable: 'items',
        message: /array/,
      },
      {
        name: 'an object given an array',
        declared: { user: spec('object') },
        vars: { user: [] },
        variable: 'user',
        message: /object/,
      },
      {
        name: 'an optional variable of the wrong type',
        declared: { n: spec('number', false) },
        vars: { n: 'x' },
        variable: 'n',
        message: /number/,
      },
      {
        name: 'the second of two declarations is wrong',
        declared: { a: spec('string'), b: spec('array') },
        vars: { a: 'x', b: 'y' },
        variable: 'b',
        message: /array/,
      },
    ];
    for (const p of problems) {
      it(`${p.name} → ${p.variable}`, function () {
        const r = checkVariables(p.declared, p.vars);
        expect(r).to.not.equal(null);
        expect(r!.variable).to.equal(p.variable);
        expect(r!.message).to.be.a('string').and.not.equal('');
        if (p.message) expect(r!.message).to.match(p.message);
      });
    }
    const fine: Array<{ name: string; declared: Declared; vars: Record<string, unknown> }> = [
      { name: 'an optional variable missing', declared: { plan: spec('string', false) }, vars: {} },
      { name: 'an optional variable null', declared: { plan: spec('string', false) }, vars: { plan: null } },
      {
        name: 'extra variables are ignored',
        declared: { plan: spec('string') },
        vars: { plan: 'pro', extra: { x: 1 } },
      },
      {
        name: 'every type right',
        declared: { s: spec('string'), n: spec('number'), b: spec('boolean'), a: spec('array'), o: spec('object') },
        vars: { s: '', n: 0, b: false, a: [], o: {} },
      },
    ];
    for (const f of fine) {
      it(`${f.name} → null`, function () {
        expect(checkVariables(f.declared, f.vars)).to.equal(null);
      });
    }
  });
});

describe('template language: limits that keep one send from holding the thread', function () {
  const declared = {
    items: { type: 'array' as const, required: true },
    flag: { type: 'boolean' as const, required: false },
  };

  it("stops a rendering whose loops over the send's lists would run too long", function () {
    const items = Array.from({ length: 1000 }, (_, i) => i);
    const t = compileTemplate(
      '{{#each items as a}}{{#each items as b}}{{#each items as c}}{{/each}}{{/each}}{{/each}}',
      'html',
      declared,
    );
    const started = Date.now();
    expect(() => renderTemplate(t, { items }, { html: true })).to.throw(RenderTooLarge);
    expect(Date.now() - started).to.be.lessThan(2000);
    // the same template over small lists renders
    expect(renderTemplate(t, { items: [1, 2] }, { html: true })).to.equal('');
  });

  it('charges condition terms and filters too, and stops output past 1,000,000 characters', function () {
    const items = Array.from({ length: 4000 }, (_, i) => i);
    const terms = Array.from({ length: 2000 }, () => 'flag').join(' and ');
    const many = compileTemplate(`{{#each items as i}}{{#if ${terms}}}x{{/if}}{{/each}}`, 'html', declared);
    expect(() => renderTemplate(many, { items, flag: true }, { html: true })).to.throw(RenderTooLarge, /steps/);
    const wide = compileTemplate(
      '{{#each items as a}}{{#each items as b}}0123456789{{/each}}{{/each}}',
      'html',
      declared,
    );
    expect(() => renderTemplate(wide, { items: items.slice(0, 400) }, { html: true })).to.throw(
      RenderTooLarge,
      /characters/,
    );
  });

  it('reads {{#if_a}} as a block it does not know, not as {{#if _a}}', function () {
    expect(() => compileTemplate('{{#if_a}}{{/if}}', 'html', declared)).to.throw(
      TemplateError,
      /unknown block \{\{#if_a\}\}/,
    );
  });

  it('refuses blocks nested deeper than 50, naming where', function () {
    const deep = '{{#if flag}}'.repeat(51) + '{{/if}}'.repeat(51);
    expect(() => compileTemplate(deep, 'html', declared)).to.throw(
      TemplateError,
      /html line 1, column 601: blocks nest at most 50 deep/,
    );
    expect(() => compileTemplate('{{#if flag}}'.repeat(50) + '{{/if}}'.repeat(50), 'html', declared)).to.not.throw();
  });
});
