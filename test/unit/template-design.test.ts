import { Type } from '@sinclair/typebox';
import { expect } from 'chai';
import { DomUtils, parseDocument } from 'htmlparser2';
import { isTag, isText, type AnyNode, type Document, type Element } from 'domhandler';
import { validateBody } from '../../src/lib/validate.js';
import { ApiError } from '../../src/lib/errors.js';
import { BLOCK_TYPES, Design, type Block } from '../../src/modules/sending/templates/design/design.schema.js';
import { checkDesign, designToSource } from '../../src/modules/sending/templates/design/design-source.js';
import {
  compileTemplate,
  renderTemplate,
  TemplateError,
  type Declared,
} from '../../src/modules/sending/templates/language/index.js';
import { SAMPLE_DECLARED, SAMPLE_DESIGN, SAMPLE_IMAGES, SAMPLE_VARIABLES } from '../fixtures/sample-design.js';

const Body = Type.Object({ design: Design }, { additionalProperties: false });

/** What a send gets: the design checked, turned into sources, compiled and rendered. */
function render(design: Design, variables: Record<string, unknown>, declared: Declared) {
  checkDesign(design, declared);
  const source = designToSource(design);
  const part = (s: string, html: boolean) =>
    renderTemplate(compileTemplate(s, 'design', declared, { urlFields: true }), variables, { html, language: 'en' });
  const html = part(source.html, true);
  return { html, text: part(source.text, false), doc: parseDocument(html) };
}

const all = (doc: Document | Element, test: (e: Element) => boolean) => DomUtils.findAll(test, [doc]);
const byTag = (doc: Document | Element, tag: string) => all(doc, (e) => e.name === tag);
/** The text a reader sees: a <br> is a line break. */
const flatten = (n: AnyNode): string =>
  isText(n) ? n.data : isTag(n) ? (n.name === 'br' ? '\n' : n.children.map(flatten).join('')) : '';
const text = (e: Element) => flatten(e).replace(/\s+/g, ' ').trim();
/** The nearest enclosing element named `tag`. */
function closest(e: Element, tag: string): Element | null {
  for (let p = e.parent; p; p = p.parent) if (isTag(p) && p.name === tag) return p;
  return null;
}
/** The data table (the one with a header), and its rows' cells. */
function dataTable(doc: Document): { table: Element; head: string[]; rows: string[][] } {
  const table = closest(byTag(doc, 'th')[0], 'table')!;
  const rows = byTag(table, 'tr').filter((tr) => closest(tr, 'table') === table);
  return { table, head: byTag(rows[0], 'th').map(text), rows: rows.slice(1).map((tr) => byTag(tr, 'td').map(text)) };
}
const attr = (e: Element, name: string) => DomUtils.getAttributeValue(e, name);
const linkNamed = (doc: Document, label: string) => {
  const found = byTag(doc, 'a').find((a) => text(a) === label);
  if (!found) expect.fail(`no link "${label}"`);
  return found;
};

function thrown<T extends Error>(fn: () => unknown): T {
  try {
    fn();
  } catch (e) {
    return e as T;
  }
  return expect.fail('expected an error');
}

const design = (...blocks: Block[]): Design => ({ blocks });
const str = { type: 'string', required: true } as const;

describe('template designs (interface §4.3)', function () {
  context('the sample design, which uses every block type', function () {
    const { html, text: plain, doc } = render(SAMPLE_DESIGN, SAMPLE_VARIABLES, SAMPLE_DECLARED);

    it('is a design the API accepts, with every block type in it', function () {
      expect(() => validateBody(Body, { design: SAMPLE_DESIGN })).not.to.throw();
      expect(new Set(SAMPLE_DESIGN.blocks.map((b) => b.type))).to.have.lengthOf(BLOCK_TYPES.length);
    });

    it('shows the headings and the paragraphs with their placeholders filled in', function () {
      expect(byTag(doc, 'h1').map(text)).to.deep.equal(['Thanks for your order, Ada!']);
      expect(byTag(doc, 'h2').map(text)).to.deep.equal(['Brew it right']);
      const paragraphs = byTag(doc, 'p').map(text);
      expect(paragraphs).to.include(
        "We've received order #NW-20931 and we're roasting your beans now. You'll get another email when it ships.",
      );
      expect(paragraphs).to.include('Prefer a gift wrap next time? Just reply to this email.');
      expect(paragraphs).to.include('Total paid: €85.90');
    });

    it('fills the table with one row per item, cells formatted by their column', function () {
      const { head, rows } = dataTable(doc);
      expect(head).to.deep.equal(['Item', 'Qty', 'Price', 'Ships']);
      expect(rows).to.deep.equal([
        ['House Espresso, 1 kg', '1', '€32.00', 'Nov 27, 2026'],
        ['Ethiopia Yirgacheffe, 250 g', '2', '€14.50', 'Nov 27, 2026'],
        ['Ceramic dripper', '1', '€24.90', 'Dec 1, 2026'],
      ]);
    });

    it('makes buttons links with their label and url, on a cell of the accent colour', function () {
      const track = linkNamed(doc, 'Track your order');
      expect(attr(track, 'href')).to.equal('https://northwind.example/orders/NW-20931');
      expect(attr(track.parent as Element, 'bgcolor')).to.equal('#9a4f1e');
      expect(attr(linkNamed(doc, 'Read the guide'), 'href')).to.equal('https://northwind.example/guides/pour-over');
      expect(attr(linkNamed(doc, 'Add to cart'), 'href')).to.equal('https://northwind.example/shop/yirgacheffe');
      expect(attr(linkNamed(doc, 'Add to calendar'), 'href')).to.equal('https://northwind.example/events/cupping.ics');
    });

    it('shows every image with its source, alt text, a width and no border, linked where a link is given', function () {
      const images = byTag(doc, 'img');
      expect(images.map((i) => [attr(i, 'src'), attr(i, 'alt')])).to.deep.equal([
        [SAMPLE_IMAGES.logo, 'Northwind Coffee'],
        [SAMPLE_IMAGES.hero, 'Fresh from the roaster'],
        [SAMPLE_IMAGES.brewer, 'A pour-over brewer'],
        [SAMPLE_IMAGES.beans, 'Ethiopia Yirgacheffe, 250 g'],
      ]);
      for (const img of images)
        expect([attr(img, 'width'), attr(img, 'border')]).to.satisfy(([w, b]: string[]) => Number(w) > 0 && b === '0');
      expect(attr(images[0], 'width')).to.equal('140');
      expect(attr(images[0].parent as Element, 'href')).to.equal('https://northwind.example');
      expect(attr(images[1].parent as Element, 'href')).to.equal('https://northwind.example/new');
    });

    it('lists items in bulleted and numbered lists', function () {
      expect(byTag(byTag(doc, 'ul')[0], 'li').map(text)).to.deep.equal([
        'Store beans in an airtight jar, away from light',
        'Grind right before brewing',
        'Use filtered water at 92–96 °C',
      ]);
      expect(byTag(byTag(doc, 'ol')[0], 'li').map(text)).to.deep.equal([
        'Rinse the filter',
        'Add 15 g of coffee',
        'Pour, wait, enjoy',
      ]);
    });

    it('shows the discount code, the quote, the event, the signature and the footer', function () {
      const paragraphs = byTag(doc, 'p').map(text);
      expect(paragraphs).to.include.members([
        'Your next bag: 15% off',
        'BREW15-ADA',
        'Valid until January 31, 2027 on any coffee in the shop.',
        'The best beans I have had outside of Addis. The subscription is worth every cent.',
        '— Mira, subscriber since 2021',
        'Cupping night at the roastery',
        'Thursday, 3 December · 18:30–20:00',
        'Northwind Roastery, 12 Harbour Lane, Bristol',
        'Jonas Berg',
        'Head roaster, Northwind Coffee',
        'Unsubscribe from news: https://northwind.example/u/8f3a',
      ]);
      expect(attr(linkNamed(doc, 'jonas@northwind.example'), 'href')).to.equal('mailto:jonas@northwind.example');
    });

    it('links each score of the rating, and each social network, to its own address', function () {
      const scores = ['1', '2', '3', '4', '5'].map((n) => attr(linkNamed(doc, n), 'href'));
      expect(scores).to.deep.equal(
        [1, 2, 3, 4, 5].map((n) => `https://northwind.example/feedback?order=NW-20931&rating=${n}`),
      );
      expect(attr(linkNamed(doc, 'Instagram'), 'href')).to.equal('https://instagram.com/northwind');
      expect(attr(linkNamed(doc, 'YouTube'), 'href')).to.equal('https://youtube.com/@northwind');
    });

    it('leaves out a block whose `when` does not hold, and shows it when it does', function () {
      const note = 'Your order is marked as a gift and will not show prices on the packing slip.';
      expect(html).not.to.include(note);
      expect(plain).not.to.include(note);
      const gift = render(
        SAMPLE_DESIGN,
        { ...SAMPLE_VARIABLES, gift: true, gift_note: 'Happy birthday!' },
        SAMPLE_DECLARED,
      );
      expect(byTag(gift.doc, 'p').map(text)).to.include(note);
      expect(gift.text).to.include(note);
      expect(gift.text).to.include('We\'ll wrap it & add a card: "Happy birthday!".');
    });

    it('is a document email clients lay out: colour schemes, a 600 px card, layout tables for screen readers, Outlook width', function () {
      const metas = byTag(doc, 'meta').map((m) => `${attr(m, 'name')}=${attr(m, 'content')}`);
      expect(metas).to.include.members(['color-scheme=light dark', 'supported-color-schemes=light dark']);
      const card = all(doc, (e) => e.name === 'table' && /ph-container/.test(attr(e, 'class') ?? ''))[0];
      expect(attr(card, 'width')).to.equal('600');
      expect(attr(card, 'style')).to.match(/max-width:600px/);
      const layout = byTag(doc, 'table').filter((t) => t !== dataTable(doc).table);
      expect(layout.filter((t) => attr(t, 'role') !== 'presentation')).to.deep.equal([]);
      expect(html).to.match(/<!--\[if mso\]><table role="presentation"[^>]*width="600"/);
      expect(attr(byTag(doc, 'body')[0], 'style')).to.include('background-color:#f3efe9');
    });

    it('writes a plain-text part with the same content and no HTML', function () {
      expect(plain).not.to.match(/<[a-z/!]/i);
      for (const line of [
        'Thanks for your order, Ada!',
        'Item | Qty | Price | Ships',
        'Ethiopia Yirgacheffe, 250 g | 2 | €14.50 | Nov 27, 2026',
        'Track your order [https://northwind.example/orders/NW-20931]',
        '- Grind right before brewing',
        '2. Add 15 g of coffee',
        '    BREW15-ADA',
        'Instagram: https://instagram.com/northwind',
        'Head roaster, Northwind Coffee',
        'Thursday, 3 December, 18:30–20:00',
        '5 (Very likely) [https://northwind.example/feedback?order=NW-20931&rating=5]',
        '----------------------------------------',
      ]) {
        expect(plain.split('\n')).to.include(line);
      }
    });
  });

  context('escaping', function () {
    it('escapes a variable and the literal text of a block, and keeps the quotes of a tag', function () {
      const d = design(
        { type: 'text', text: 'Tom & Jerry <3 {{ name }}' },
        { type: 'text', text: "{{#if plan == 'pro'}}Pro{{else}}Free{{/if}} plan" },
        { type: 'button', label: 'Go', url: 'https://x.test/?q={{ name }}' },
        { type: 'heading', text: 'Upgrade to Pro', when: "plan != 'pro'" },
      );
      const { html, doc } = render(d, { name: '<b>&"\'', plan: 'pro' }, { name: str, plan: str });
      expect(html).to.include('Tom &amp; Jerry &lt;3 &lt;b&gt;&amp;&quot;&#39;');
      expect(byTag(doc, 'b')).to.deep.equal([]);
      expect(byTag(doc, 'p').map(text)).to.deep.equal(['Tom & Jerry <3 <b>&"\'', 'Pro plan']);
      expect(attr(linkNamed(doc, 'Go'), 'href')).to.equal("https://x.test/?q=%3Cb%3E%26%22'");
      expect(byTag(doc, 'h1')).to.deep.equal([]);
    });

    it('turns blank lines into paragraphs and single newlines into line breaks', function () {
      const { doc } = render(
        design({ type: 'text', text: 'Dear {{ name }},\nthanks.\n\n\nSee you soon.' }),
        { name: 'Ada' },
        { name: str },
      );
      const ps = byTag(doc, 'p');
      expect(ps.map(text)).to.deep.equal(['Dear Ada, thanks.', 'See you soon.']);
      expect(byTag(ps[0], 'br')).to.have.lengthOf(1);
    });

    it('drops the line of a block tag that stands alone on it, in the HTML as in the text', function () {
      const d = design({
        type: 'text',
        text: 'Hi {{ name }},\n{{#if vip}}\nyour VIP gift is in the box.\n{{/if}}\nEnjoy!',
      });
      const declared: Declared = { name: str, vip: { type: 'boolean', required: true } };
      const vip = render(d, { name: 'Ada', vip: true }, declared);
      expect(byTag(vip.doc, 'p').map((p) => flatten(p).split('\n'))).to.deep.equal([
        ['Hi Ada,', 'your VIP gift is in the box.', 'Enjoy!'],
      ]);
      expect(vip.text).to.equal('Hi Ada,\nyour VIP gift is in the box.\nEnjoy!\n');
      const plain = render(d, { name: 'Ada', vip: false }, declared);
      expect(byTag(plain.doc, 'p').map((p) => flatten(p).split('\n'))).to.deep.equal([['Hi Ada,', 'Enjoy!']]);
      expect(plain.text).to.equal('Hi Ada,\nEnjoy!\n');
    });

    it('shows an empty table as its header only, with plain numbers, dollars by default and dates', function () {
      const table: Block = {
        type: 'table',
        rows: 'lines',
        columns: [
          { header: 'N', field: 'n', format: 'number' },
          { header: 'Cost', field: 'n', format: 'currency' },
          { header: 'On', field: 'on', format: 'date' },
        ],
      };
      const filled = render(
        design(table),
        { lines: [{ n: 1234.5, on: '2026-01-05' }] },
        { lines: { type: 'array', required: true } },
      );
      expect(dataTable(filled.doc).rows).to.deep.equal([['1,234.5', '$1,234.50', 'Jan 5, 2026']]);
      const empty = dataTable(render(design(table), { lines: [] }, { lines: { type: 'array', required: true } }).doc);
      expect([empty.head, empty.rows]).to.deep.equal([['N', 'Cost', 'On'], []]);
    });
  });

  context('a design the schema refuses names the field', function () {
    const failure = (d: unknown) => thrown<ApiError>(() => validateBody(Body, { design: d }));
    const cases: Array<[string, unknown, string]> = [
      [
        'a button without url',
        design({ type: 'heading', text: 'a' }, { type: 'text', text: 'b' }, { type: 'button', label: 'Go' } as Block),
        'design.blocks[2].url: is required',
      ],
      [
        'an unknown field',
        { blocks: [{ type: 'heading', text: 'a', colour: 'red' }] },
        'design.blocks[0].colour: is not a known field',
      ],
      [
        'an unknown block type',
        { blocks: [{ type: 'divider' }, { type: 'video', url: 'u' }] },
        `design.blocks[1].type: must be one of: ${BLOCK_TYPES.join(', ')}`,
      ],
      ['a block without type', { blocks: [{ text: 'a' }] }, 'design.blocks[0].type: is required'],
      [
        'a heading too long',
        { blocks: [{ type: 'heading', text: 'x'.repeat(301) }] },
        'design.blocks[0].text: must be at most 300 characters',
      ],
      ['a spacer too short', { blocks: [{ type: 'spacer', height: 3 }] }, 'design.blocks[0].height: must be >= 4'],
      [
        'a social network not in the list',
        { blocks: [{ type: 'social', links: [{ network: 'myspace', url: 'u' }] }] },
        'design.blocks[0].links[0].network: must be one of: website, x, facebook, instagram, linkedin, youtube, tiktok, github',
      ],
      [
        'a list item too long',
        { blocks: [{ type: 'list', items: ['a', 'x'.repeat(301)] }] },
        'design.blocks[0].items[1]: must be at most 300 characters',
      ],
      [
        'a table column without header',
        { blocks: [{ type: 'table', rows: 'r', columns: [{ header: 'A', field: 'a' }, { field: 'b' }] }] },
        'design.blocks[0].columns[1].header: is required',
      ],
      [
        'a table of seven columns',
        {
          blocks: [
            { type: 'table', rows: 'r', columns: Array.from({ length: 7 }, () => ({ header: 'A', field: 'a' })) },
          ],
        },
        'design.blocks[0].columns: must have at most 6 items',
      ],
      [
        'a when with a tag in it',
        { blocks: [{ type: 'divider', when: '{{ x }}' }] },
        "design.blocks[0].when: does not have the expected format (^[A-Za-z0-9_.@' =!<>-]*$)",
      ],
      [
        'an accent that is not #RRGGBB',
        { accent: 'blue', blocks: [{ type: 'divider' }] },
        'design.accent: does not have the expected format (^#[0-9A-Fa-f]{6}$)',
      ],
      ['no blocks', { blocks: [] }, 'design.blocks: must have at least 1 item'],
      [
        '101 blocks',
        { blocks: Array.from({ length: 101 }, () => ({ type: 'divider' })) },
        'design.blocks: must have at most 100 items',
      ],
    ];
    for (const [name, d, message] of cases) {
      it(`${name}: ${message}`, function () {
        const e = failure(d);
        expect([e.code, e.message]).to.deep.equal(['validation_error', message]);
      });
    }
  });

  context('checkDesign refuses a template mistake against its block field', function () {
    const declared: Declared = { name: str, plan: str, orders: { type: 'array', required: true } };
    const where = (d: Design) => {
      const e = thrown<TemplateError>(() => checkDesign(d, declared));
      expect(e).to.be.instanceOf(TemplateError);
      return `${e.field} ${e.line}:${e.column} ${e.reason}`;
    };

    it('an undeclared variable in a heading, with its line and column', function () {
      expect(where(design({ type: 'divider' }, { type: 'heading', text: 'Hello {{ nme }}' }))).to.equal(
        "design.blocks[1].text 1:10 variable 'nme' is not declared under variables",
      );
      expect(where(design({ type: 'text', text: 'Line one\nand {{ nme }}' }))).to.equal(
        "design.blocks[0].text 2:8 variable 'nme' is not declared under variables",
      );
    });

    it('a condition that is not one', function () {
      expect(where(design({ type: 'divider', when: "plan = 'pro'" }))).to.match(
        /^design\.blocks\[0\]\.when 1:6 use == to compare/,
      );
      expect(where(design({ type: 'divider', when: "plann == 'pro'" }))).to.equal(
        "design.blocks[0].when 1:1 variable 'plann' is not declared under variables",
      );
    });

    it('a table over a variable that is not declared, or not an array', function () {
      const table = (rows: string): Block => ({
        type: 'table',
        rows,
        columns: [{ header: 'Total', field: 'total', format: 'currency' }],
      });
      expect(where(design(table('order')))).to.equal(
        "design.blocks[0].rows 1:1 variable 'order' is not declared under variables",
      );
      expect(where(design(table('name')))).to.equal(
        "design.blocks[0].rows 1:1 variable 'name' is declared as string: a table needs an array",
      );
      expect(() => checkDesign(design(table('orders')), declared)).not.to.throw();
    });

    it('a list item, a social link and a table header by their index', function () {
      expect(where(design({ type: 'list', items: ['ok', '{{#if name}}open'] }))).to.match(
        /^design\.blocks\[0\]\.items\[1\] 1:1 /,
      );
      expect(where(design({ type: 'social', links: [{ network: 'x', url: 'https://x.com/{{ handle }}' }] }))).to.match(
        /^design\.blocks\[0\]\.links\[0\]\.url 1:18 /,
      );
      const columns = [
        { header: 'Item', field: 'sku' },
        { header: '{{ label }}', field: 'qty' },
      ];
      expect(where(design({ type: 'table', rows: 'orders', columns }))).to.match(
        /^design\.blocks\[0\]\.columns\[1\]\.header 1:4 /,
      );
    });
  });
});
