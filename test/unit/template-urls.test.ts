import { expect } from 'chai';
import { DomUtils, parseDocument } from 'htmlparser2';
import type { Element } from 'domhandler';
import { ApiError } from '../../src/lib/errors.js';
import type { Block, Design } from '../../src/modules/sending/templates/design/design.schema.js';
import { urlProblem, type Declared, type UrlUse } from '../../src/modules/sending/templates/language/index.js';
import { renderVersion } from '../../src/modules/sending/templates/render-version.js';
import type { TemplateVersion, VersionContent } from '../../src/modules/sending/templates/template.js';
import { compileVersion } from '../../src/modules/sending/templates/versions.js';

// The URL fields of designs as a publish and a send see them: compiled by
// compileVersion, rendered by renderVersion.

const str = (required = true) => ({ type: 'string', required }) as const;

function publish(design: Design, declared: Declared = {}): TemplateVersion {
  const content: VersionContent = {
    subject: 's',
    html: null,
    text: null,
    design,
    translations: {},
    variables: declared,
  };
  return {
    ...content,
    templateUid: 'tpl_x',
    templateId: 'x',
    version: 1,
    restoredFrom: null,
    createdAt: 0,
    compiled: compileVersion(content),
  };
}

/** The design rendered: its parsed HTML and its text part. */
function send(design: Design, declared: Declared, variables: Record<string, unknown>) {
  const r = renderVersion(publish(design, declared), variables, null);
  return { doc: parseDocument(r.html!), text: r.text! };
}

const all = (doc: ReturnType<typeof parseDocument>, tag: string) => DomUtils.findAll((e) => e.name === tag, [doc]);
const attr = (e: Element, name: string) => DomUtils.getAttributeValue(e, name);
const hrefs = (doc: ReturnType<typeof parseDocument>) => all(doc, 'a').map((a) => attr(a, 'href'));
const srcs = (doc: ReturnType<typeof parseDocument>) => all(doc, 'img').map((a) => attr(a, 'src'));

function refusal(design: Design, declared: Declared = {}): { field: string | undefined; message: string } {
  try {
    publish(design, declared);
  } catch (e) {
    expect(e).to.be.instanceOf(ApiError);
    const err = e as ApiError;
    expect(err.code).to.equal('validation_error');
    return { field: err.field, message: err.message };
  }
  return expect.fail('expected the publish to be refused');
}

const button = (url: string): Block => ({ type: 'button', label: 'Go', url });

describe('URLs of template designs', function () {
  context('urlProblem, the one check at publish and at render', function () {
    const cases: Array<[string, UrlUse, 'written' | 'variable', string | null]> = [
      ['https://x.test/a?b=c', 'link', 'written', null],
      ['/relative/path', 'link', 'written', null],
      ['tel:+441174960000', 'link', 'written', null],
      ['https://x.test/?next=javascript:alert(1)', 'link', 'written', null],
      ['javascript:alert(1)', 'link', 'written', 'javascript: URLs are refused'],
      ['JavaScript:alert(1)', 'link', 'written', 'javascript: URLs are refused'],
      ['  java\tscript:alert(1)', 'link', 'written', 'javascript: URLs are refused'],
      ['\u0001java\nscr\u00a0ipt:alert(1)', 'link', 'written', 'javascript: URLs are refused'],
      ['java\u200bscript:alert(1)', 'link', 'written', 'javascript: URLs are refused'],
      ['VBScript:MsgBox(1)', 'link', 'written', 'vbscript: URLs are refused'],
      ['data:text/html;base64,PHNjcmlwdD4=', 'link', 'written', 'data: URLs are refused'],
      ['data:image/png;base64,iVBO', 'link', 'written', 'data: URLs are refused'],
      ['data:text/html,<script>', 'image', 'written', 'data: URLs are refused (an image may be data:image/…)'],
      ['data:image/svg+xml;base64,PHN2Zz4=', 'image', 'written', null],
      ['https://x.test/', 'link', 'variable', null],
      ['HTTP://x.test/', 'link', 'variable', null],
      ['mailto:ann@x.test', 'link', 'variable', null],
      ['mailto:ann@x.test', 'image', 'variable', 'a URL a variable gives must be http:, https: or data:image/…'],
      ['data:image/png;base64,iVBO', 'image', 'variable', null],
      ['tel:+441174960000', 'link', 'variable', 'a URL a variable gives must be http:, https: or mailto:'],
      ['//x.test/a', 'link', 'variable', 'a URL a variable gives must be http:, https: or mailto:'],
      ['', 'link', 'variable', 'a URL a variable gives must be http:, https: or mailto:'],
      [' javascript:alert(1)', 'link', 'variable', 'a URL a variable gives must be http:, https: or mailto:'],
    ];
    for (const [url, use, origin, expected] of cases) {
      it(`${JSON.stringify(url)} as ${origin === 'written' ? 'written' : "a variable's"} ${use}: ${expected ?? 'allowed'}`, function () {
        expect(urlProblem(url, use, origin)).to.equal(expected);
      });
    }
  });

  context('a placeholder inside a URL field is percent-encoded', function () {
    it('in the query of a button, in the HTML and in the text part', function () {
      const { doc, text } = send(
        { blocks: [button('https://x.test/?u={{ name }}#top')] },
        { name: str() },
        { name: 'Ann & Bob?x=1' },
      );
      expect(hrefs(doc)).to.deep.equal(['https://x.test/?u=Ann%20%26%20Bob%3Fx%3D1#top']);
      expect(text).to.equal('Go [https://x.test/?u=Ann%20%26%20Bob%3Fx%3D1#top]');
    });

    it('in a path, where a slash in the value is encoded too', function () {
      const { doc } = send({ blocks: [button('https://x.test/orders/{{ id }}')] }, { id: str() }, { id: 'A/17 b' });
      expect(hrefs(doc)).to.deep.equal(['https://x.test/orders/A%2F17%20b']);
    });

    it('inside {{#if}} and {{#each}} of the field, and after an opening placeholder', function () {
      const declared: Declared = {
        base: str(),
        pro: { type: 'boolean', required: true },
        q: str(),
        tags: { type: 'array', required: true },
      };
      const url = '{{ base }}/s?{{#if pro}}plan=pro&{{/if}}q={{ q }}{{#each tags as t}}&t={{ t }}{{/each}}';
      const { doc } = send({ blocks: [button(url)] }, declared, {
        base: 'https://x.test',
        pro: true,
        q: 'a&b',
        tags: ['c d', 'e=f'],
      });
      expect(hrefs(doc)).to.deep.equal(['https://x.test/s?plan=pro&q=a%26b&t=c%20d&t=e%3Df']);
    });

    it("in a signature's email, which its link puts after mailto:, its @ kept (RFC 6068)", function () {
      const signature = (email: string) =>
        send({ blocks: [{ type: 'signature', name: 'Jo', email: '{{ email }}' }] }, { email: str() }, { email });
      const a = all(signature('ann+tag@x.test').doc, 'a')[0];
      expect([attr(a, 'href'), DomUtils.textContent(a)]).to.deep.equal(['mailto:ann%2Btag@x.test', 'ann+tag@x.test']);
      // a value cannot add a header or a second address
      expect(hrefs(signature('ann@x.test?cc=eve@y.test,bob@y.test').doc)).to.deep.equal([
        'mailto:ann@x.test%3Fcc%3Deve@y.test%2Cbob@y.test',
      ]);
    });

    it('in a mailto: field, the @ kept in the address only, not in its headers', function () {
      const { doc } = send(
        { blocks: [button('mailto:{{ to }}?subject={{ subject }}')] },
        { to: str(), subject: str() },
        { to: 'ann@x.test', subject: 'a@b &c' },
      );
      expect(hrefs(doc)).to.deep.equal(['mailto:ann@x.test?subject=a%40b%20%26c']);
    });

    it('once: a placeholder already piped through url is not encoded twice', function () {
      const { doc } = send({ blocks: [button('https://x.test/?q={{ q | url }}')] }, { q: str() }, { q: 'a b' });
      expect(hrefs(doc)).to.deep.equal(['https://x.test/?q=a%20b']);
    });

    it('in every URL field: image and logo src and link, columns, product, social, signature website, event, rating', function () {
      const v = '{{ v }}';
      const design: Design = {
        blocks: [
          { type: 'image', url: `https://i.test/${v}.png`, link: `https://x.test/image?v=${v}` },
          { type: 'logo', url: `https://i.test/logo-${v}.png`, link: `https://x.test/logo?v=${v}` },
          {
            type: 'columns',
            image_url: `https://i.test/col-${v}.png`,
            button_label: 'More',
            button_url: `https://x.test/columns?v=${v}`,
          },
          {
            type: 'product',
            name: 'Mug',
            image_url: `https://i.test/mug-${v}.png`,
            url: `https://x.test/product?v=${v}`,
          },
          { type: 'social', links: [{ network: 'x', url: `https://x.com/${v}` }] },
          { type: 'signature', name: 'Jo', email: `jo+${v}@x.test`, website: `https://x.test/jo?v=${v}` },
          { type: 'event', title: 'Meet', date: 'Monday', url: `https://x.test/event?v=${v}` },
          { type: 'rating', question: 'How?', url: `https://x.test/rate?v=${v}` },
        ],
      };
      const { doc, text } = send(design, { v: str() }, { v: 'a b' });
      expect(srcs(doc)).to.deep.equal([
        'https://i.test/a%20b.png',
        'https://i.test/logo-a%20b.png',
        'https://i.test/col-a%20b.png',
        'https://i.test/mug-a%20b.png',
      ]);
      expect(hrefs(doc)).to.deep.equal([
        'https://x.test/image?v=a%20b',
        'https://x.test/logo?v=a%20b',
        'https://x.test/columns?v=a%20b',
        'https://x.test/product?v=a%20b',
        'https://x.test/product?v=a%20b',
        'https://x.com/a%20b',
        'mailto:jo+a%20b@x.test',
        'https://x.test/jo?v=a%20b',
        'https://x.test/event?v=a%20b',
        ...[1, 2, 3, 4, 5].map((n) => `https://x.test/rate?v=a%20b&rating=${n}`),
      ]);
      // the link texts show the value as it is; the URLs are encoded
      expect(all(doc, 'a').map((a) => DomUtils.textContent(a))).to.include.members([
        'jo+a b@x.test',
        'https://x.test/jo?v=a b',
      ]);
      expect(text).to.include('X: https://x.com/a%20b');
      expect(text).to.include('1 [https://x.test/rate?v=a%20b&rating=1]');
    });
  });

  context('a placeholder that opens a URL field gives the URL itself', function () {
    const declared: Declared = { link: str(false), id: str(false) };
    const render = (url: string, variables: Record<string, unknown>) =>
      send({ blocks: [button(url), { type: 'image', url: '{{ link }}', alt: 'pic' }] }, declared, variables);

    it('as it is, when it is http:, https: or mailto:', function () {
      for (const link of ['https://x.test/a?b=1&c=%20', 'HTTP://x.test/', 'mailto:ann@x.test?subject=Hi']) {
        expect(hrefs(render('{{ link }}', { link }).doc)).to.deep.equal([link]);
      }
      expect(
        hrefs(render('{{ link }}/unsubscribe?u={{ id }}', { link: 'https://x.test', id: 'a&b' }).doc),
      ).to.deep.equal(['https://x.test/unsubscribe?u=a%26b']);
      expect(hrefs(render("{{ link | 'https://fallback.test/' }}", {}).doc)).to.deep.equal(['https://fallback.test/']);
    });

    it('as # when it is anything else: javascript:, data:, vbscript:, another scheme, a relative URL, nothing', function () {
      const refused = [
        'javascript:alert(1)',
        ' JaVa\tScRiPt:alert(1)',
        'data:text/html,<script>alert(1)</script>',
        'vbscript:msgbox(1)',
        'tel:+1',
        '/a',
        'x.test',
        '',
      ];
      for (const link of refused) {
        const { doc, text } = render('{{ link }}', { link });
        expect(hrefs(doc), link).to.deep.equal(['#']);
        expect(text, link).to.equal('Go [#]\n\npic');
      }
      expect(hrefs(render('{{ link }}', {}).doc)).to.deep.equal(['#']);
      // what the literal text after it adds cannot make a refused start pass
      expect(hrefs(render('{{ link }}:alert(1)', { link: 'javascript' }).doc)).to.deep.equal(['#']);
      expect(hrefs(render('{{ link }}/x', { link: 'javascript:alert(1)//' }).doc)).to.deep.equal(['#']);
    });

    it('an image source from a variable: http:, https: or data:image/…, else #', function () {
      const img = (link: string) => srcs(render('https://x.test/', { link }).doc);
      expect(img('https://i.test/a.png')).to.deep.equal(['https://i.test/a.png']);
      expect(img('data:image/png;base64,iVBO')).to.deep.equal(['data:image/png;base64,iVBO']);
      expect(img('mailto:ann@x.test')).to.deep.equal(['#']);
      expect(img('javascript:alert(1)')).to.deep.equal(['#']);
    });

    it('not when it is piped through url: then it is encoded like the others', function () {
      expect(hrefs(render('{{ link | url }}', { link: 'a b' }).doc)).to.deep.equal(['a%20b']);
    });
  });

  context('a refused scheme written in a URL field is refused at publish, naming the field', function () {
    const cases: Array<[string, Design, string, RegExp]> = [
      [
        'a button',
        { blocks: [{ type: 'heading', text: 'Hi' }, { type: 'text', text: 'x' }, button('javascript:alert(1)')] },
        'design.blocks[2].url',
        /^design\.blocks\[2\]\.url line 1, column 1: javascript: URLs are refused$/,
      ],
      [
        'any case, with whitespace and control characters',
        { blocks: [button(' \u0001Java\nScript:alert(1)')] },
        'design.blocks[0].url',
        /column 3: javascript: URLs are refused/,
      ],
      ['vbscript:', { blocks: [button('vbscript:msgbox(1)')] }, 'design.blocks[0].url', /vbscript: URLs are refused/],
      [
        'a data: link',
        { blocks: [{ type: 'image', url: 'https://i.test/a.png', link: 'data:text/html,<b>hi</b>' }] },
        'design.blocks[0].link',
        /data: URLs are refused/,
      ],
      [
        'a data: image that is not an image',
        { blocks: [{ type: 'logo', url: 'data:text/html,<b>hi</b>' }] },
        'design.blocks[0].url',
        /data: URLs are refused \(an image may be data:image\/…\)/,
      ],
      [
        'a social link by its index',
        {
          blocks: [
            {
              type: 'social',
              links: [
                { network: 'x', url: 'https://x.com/a' },
                { network: 'github', url: 'javascript:alert(1)' },
              ],
            },
          ],
        },
        'design.blocks[0].links[1].url',
        /javascript:/,
      ],
      [
        'a signature website',
        { blocks: [{ type: 'signature', name: 'Jo', website: 'javascript:alert(1)' }] },
        'design.blocks[0].website',
        /javascript:/,
      ],
      [
        'a columns button',
        {
          blocks: [
            { type: 'columns', image_url: 'https://i.test/a.png', button_label: 'Go', button_url: 'javascript:x' },
          ],
        },
        'design.blocks[0].button_url',
        /javascript:/,
      ],
      [
        'one branch of an {{#if}}',
        { blocks: [button('{{#if pro}}https://x.test/{{else}}javascript:alert(1){{/if}}')] },
        'design.blocks[0].url',
        /column 35: javascript:/,
      ],
      [
        'text split by an {{#if}}',
        { blocks: [button('java{{#if pro}}{{/if}}script:alert(1)')] },
        'design.blocks[0].url',
        /column 1: javascript:/,
      ],
      [
        'text joined across {{#if}} branches',
        { blocks: [button('{{#if pro}}java{{else}}x{{/if}}script:alert(1)')] },
        'design.blocks[0].url',
        /column 12: javascript: URLs are refused$/,
      ],
      [
        'text joined across {{else if}} branches',
        { blocks: [button('{{#if pro}}x{{else if n > 1}}vb{{/if}}script:x')] },
        'design.blocks[0].url',
        /column 30: vbscript:/,
      ],
      [
        'text an {{#each}} makes by turning twice',
        { blocks: [button('{{#each xs as x}}{{#if x}}java{{else}}script:{{/if}}{{/each}}alert(1)')] },
        'design.blocks[0].url',
        /column 27: javascript:/,
      ],
      [
        'text after a placeholder that gives nothing',
        { blocks: [button('{{ x }}javascript:alert(1)')] },
        'design.blocks[0].url',
        /column 8: javascript:/,
      ],
      [
        'a fallback that is such a URL',
        { blocks: [button("{{ x | 'javascript:alert(1)' }}")] },
        'design.blocks[0].url',
        /column 1: javascript: URLs are refused \(this placeholder's fallback\)$/,
      ],
      [
        'a fallback anywhere in the field, unquoted, or after filters',
        { blocks: [button('https://x.test/?next={{ x | upper | JavaScript:alert(1) }}')] },
        'design.blocks[0].url',
        /column 22: javascript: .*fallback/,
      ],
      [
        'a fallback that a filter turns into one',
        { blocks: [{ type: 'image', url: "{{ x | 'DATA:TEXT/HTML,hi' | lower }}" }] },
        'design.blocks[0].url',
        /data: URLs are refused \(an image may be data:image\/…\) \(this placeholder's fallback\)/,
      ],
      [
        'a fallback that opens a refused scheme with the text after it',
        { blocks: [button("{{ x | 'java' }}script:alert(1)")] },
        'design.blocks[0].url',
        /column 1: javascript: URLs are refused$/,
      ],
      [
        'a fallback inside a branch, joined with a literal',
        { blocks: [button("{{#if pro}}{{ x | 'data' }}{{/if}}:text/html,hi")] },
        'design.blocks[0].url',
        /column 12: data:/,
      ],
    ];
    for (const [name, design, field, message] of cases) {
      it(`${name}: ${field}`, function () {
        const e = refusal(design, {
          pro: { type: 'boolean', required: true },
          n: { type: 'number', required: true },
          x: str(false),
          xs: { type: 'array', required: true },
        });
        expect(e.field).to.equal(field);
        expect(e.message).to.match(message);
      });
    }

    it('in a translation, under the translation', function () {
      const content: VersionContent = {
        subject: 's',
        html: null,
        text: 't',
        design: null,
        translations: { de: { design: { blocks: [button('javascript:alert(1)')] } } },
        variables: {},
      };
      expect(() => compileVersion(content))
        .to.throw(ApiError)
        .with.property('field', 'translations.de.design.blocks[0].url');
    });

    it('but not a data:image/… image, a tel: link, or javascript: inside a query', function () {
      const design: Design = {
        blocks: [
          { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=', link: 'tel:+441174960000' },
          button('https://x.test/?next=javascript:alert(1)'),
          button('https://x.test/?next={{ q }}javascript:alert(1)'),
          button("{{#if q}}https{{else}}{{ q | 'http' }}{{/if}}://x.test/{{ q | 'a' }}"),
          { type: 'image', url: "{{#if q}}{{ q | 'data' }}{{else}}data{{/if}}:image/png;base64,iVBO" },
        ],
      };
      const { doc } = send(design, { q: str(false) }, {});
      expect(srcs(doc)).to.deep.equal(['data:image/png;base64,iVBORw0KGgo=', 'data:image/png;base64,iVBO']);
      expect(hrefs(doc)).to.deep.equal([
        'tel:+441174960000',
        'https://x.test/?next=javascript:alert(1)',
        'https://x.test/?next=javascript:alert(1)',
        'http://x.test/a',
      ]);
    });

    it('in a few steps however many {{#if}}s a field holds', function () {
      const many = '{{#if pro}}a{{else if n > 1}}b{{else}}{{/if}}'.repeat(40);
      expect(() =>
        publish(
          { blocks: [button(`https://x.test/${many}`), button(`${many}https://x.test/`)] },
          { pro: { type: 'boolean', required: true }, n: { type: 'number', required: true } },
        ),
      ).not.to.throw();
      expect(
        refusal(
          { blocks: [button(`${many}javascript:alert(1)`)] },
          { pro: { type: 'boolean', required: true }, n: { type: 'number', required: true } },
        ).message,
      ).to.match(/javascript: URLs are refused/);
    });

    it('and what variables make of branch texts is checked when it renders, as #', function () {
      const declared: Declared = { x: str(false), a: { type: 'boolean', required: false } };
      const design: Design = { blocks: [button('{{#if a}}java{{else}}x{{/if}}{{ x }}cript:alert(1)')] };
      expect(hrefs(send(design, declared, { a: true, x: 's' }).doc)).to.deep.equal(['#']);
      expect(hrefs(send(design, declared, { a: false, x: 's' }).doc)).to.deep.equal(['xscript:alert(1)']);
    });
  });
});
