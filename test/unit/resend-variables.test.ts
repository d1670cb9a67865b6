import { expect } from 'chai';
import { ApiError } from '../../src/lib/errors.js';
import {
  broadcastInResendSyntax,
  broadcastVariable,
  translateResend,
  type Resolve,
} from '../../src/modules/compat/resend/resend-variables.js';
import {
  broadcastVariables,
  compileInline,
  renderInline,
  type FanOutContact,
} from '../../src/modules/audience/broadcasts/broadcast-content.js';
import { compileTemplate, renderTemplate, type Declared } from '../../src/modules/sending/templates/language/index.js';

// Resend's {{{VAR}}} and {{{VAR|fallback}}} written in our template language (docs/resend.md),
// checked by what our language then renders, not by the text of the translation alone.

/** Any plain name is a variable of the same name (a template's resolver, without its declarations). */
const sameName: Resolve = ({ name, fallback }) => ({ path: name, fallback });

const declared = (...names: string[]): Declared =>
  Object.fromEntries(names.map((n) => [n, { type: 'string', required: false }]));

/** `source` translated, compiled as `field` and rendered with `vars` (html escapes when field is html). */
function rendered(source: string, vars: Record<string, unknown>, field = 'text'): string {
  const ours = translateResend(source, field, sameName);
  const tree = compileTemplate(ours, field, declared(...Object.keys(vars), 'A', 'B', 'NAME'));
  return renderTemplate(tree, vars, { html: field === 'html' });
}

/** The 400 validation_error a translation throws, with its field and message. */
function refused(source: string, field = 'html', resolve: Resolve = sameName): ApiError {
  try {
    translateResend(source, field, resolve);
  } catch (e) {
    expect(e).to.be.instanceOf(ApiError);
    const err = e as ApiError;
    expect(err.code).to.equal('validation_error');
    expect(err.field).to.equal(field);
    return err;
  }
  throw new Error(`${JSON.stringify(source)} was not refused`);
}

const ann: FanOutContact = { id: 'con_a', email: 'ann@x.test', firstName: 'Ann', lastName: 'Lee', properties: {} };
const nameless: FanOutContact = { id: 'con_b', email: 'b@x.test', firstName: null, lastName: null, properties: {} };

/** A broadcast written in Resend's syntax, as the fan-out renders it for one contact. */
function broadcastFor(content: { subject: string; html?: string; text?: string }, c: FanOutContact) {
  const t = (v: string | undefined, f: string) =>
    v === undefined ? undefined : translateResend(v, f, broadcastVariable);
  const version = compileInline({
    from: 'a@x.test',
    subject: t(content.subject, 'subject'),
    html: t(content.html, 'html'),
    text: t(content.text, 'text'),
  })!;
  return renderInline(version, broadcastVariables(c, [], 'https://mail.test/p/tok'));
}

describe("Resend's template variables in our language", function () {
  context('when a variable has no fallback', function () {
    it('becomes our placeholder of the same name', function () {
      expect(translateResend('<p>{{{PRODUCT}}}</p>', 'html', sameName)).to.equal('<p>{{ PRODUCT }}</p>');
      expect(rendered('Name: {{{NAME}}}', { NAME: 'Mug' })).to.equal('Name: Mug');
    });

    it('reads a name with blanks around it, and inserts nothing when the value is missing', function () {
      expect(rendered('[{{{  NAME  }}}]', {})).to.equal('[]');
    });

    it('renders adjacent variables side by side, and a brace after one as text', function () {
      expect(rendered('{{{A}}}{{{B}}}', { A: 'x', B: 'y' })).to.equal('xy');
      expect(rendered('{{{A}}}}', { A: 'x' })).to.equal('x}');
      expect(rendered('{ {{{A}}} }', { A: 'x' })).to.equal('{ x }');
    });
  });

  context('when a variable has a fallback', function () {
    it('uses it when the value is missing, null or empty, and the value otherwise', function () {
      expect(rendered('Hi {{{NAME|there}}}', {})).to.equal('Hi there');
      expect(rendered('Hi {{{NAME|there}}}', { NAME: null })).to.equal('Hi there');
      expect(rendered('Hi {{{NAME|there}}}', { NAME: '' })).to.equal('Hi there');
      expect(rendered('Hi {{{NAME|there}}}', { NAME: 'Ann' })).to.equal('Hi Ann');
    });

    it('keeps the words of a fallback with spaces, trimmed at its ends', function () {
      expect(translateResend('{{{ NAME | dear friend }}}', 'text', sameName)).to.equal("{{ NAME | 'dear friend' }}");
      expect(rendered('Hi {{{ NAME | dear  friend }}}!', {})).to.equal('Hi dear  friend!');
    });

    it('keeps quotes, backslashes and bars of a fallback as they are', function () {
      expect(rendered(`{{{NAME|it's "me"}}}`, {})).to.equal(`it's "me"`);
      expect(rendered('{{{NAME|a\\b}}}', {})).to.equal('a\\b');
      expect(rendered('{{{NAME|a|b}}}', {})).to.equal('a|b');
      expect(rendered("{{{NAME|'}}}", {})).to.equal("'");
    });

    it('takes a fallback that is the name of one of our filters as text', function () {
      expect(rendered('{{{NAME|upper}}}', {})).to.equal('upper');
      expect(rendered('{{{NAME|upper}}}', { NAME: 'ann' })).to.equal('ann');
    });

    it('keeps an empty fallback', function () {
      expect(translateResend('{{{NAME|}}}', 'text', sameName)).to.equal("{{ NAME | '' }}");
    });
  });

  context('in html, the subject and the text', function () {
    it('escapes values and fallbacks for HTML in html, and inserts them as they are in the subject', function () {
      expect(rendered('<p>{{{NAME}}}</p>', { NAME: '<b>&' }, 'html')).to.equal('<p>&lt;b&gt;&amp;</p>');
      expect(rendered('<p>{{{NAME|<i>}}}</p>', {}, 'html')).to.equal('<p>&lt;i&gt;</p>');
      expect(rendered('Re: {{{NAME}}} & co', { NAME: '<b>' }, 'subject')).to.equal('Re: <b> & co');
    });

    it('leaves our own placeholders, conditions and filters as they are', function () {
      const ours = '{{#if NAME}}Hi {{ NAME | upper }}{{else}}Hello{{/if}}, {{{A|you}}}';
      expect(translateResend(ours, 'text', sameName)).to.equal(
        "{{#if NAME}}Hi {{ NAME | upper }}{{else}}Hello{{/if}}, {{ A | 'you' }}",
      );
      expect(rendered(ours, { NAME: 'ann' })).to.equal('Hi ANN, you');
    });
  });

  context('when something between {{{ and }}} is not a variable', function () {
    it('refuses it with the field, line and column', function () {
      const e = refused('<p>\n  {{{ first name }}}</p>');
      expect(e.message).to.match(/^html line 2, column 3: \{\{\{ first name \}\}\} is not a Resend variable/);
    });

    it('refuses four braces, a block, an empty one, and one never closed', function () {
      expect(refused('{{{{NAME}}}}').message).to.include('is not a Resend variable');
      expect(refused('{{{#if NAME}}}x{{{/if}}}').message).to.include('is not a Resend variable');
      expect(refused('{{{}}}').message).to.include('is not a Resend variable');
      expect(refused('a {{{NAME}} b', 'subject').message).to.equal(
        'subject line 1, column 3: {{{ is never closed with }}}',
      );
    });

    it('refuses a fallback holding }}, which no placeholder of ours can hold', function () {
      expect(refused('{{{NAME|a}}b}}}').message).to.include('a fallback cannot hold }}');
    });

    it('refuses a name its resolver refuses, with the resolver’s reason', function () {
      const e = refused('x {{{NOPE}}}', 'text', () => ({ refused: 'NOPE is unknown' }));
      expect(e.message).to.equal('text line 1, column 3: NOPE is unknown');
    });
  });
});

describe("Resend's broadcast variables", function () {
  it('fills the contact’s fields by their older names and as contact.<field>, with fallbacks', function () {
    const content = {
      subject: 'Hi {{{FIRST_NAME|there}}}',
      html: '<p>{{{contact.first_name|Friend}}} {{{LAST_NAME}}} &lt;{{{EMAIL}}}&gt;</p>',
      text: '{{{FIRST_NAME|there}}}',
    };
    expect(broadcastFor(content, ann)).to.deep.include({
      subject: 'Hi Ann',
      html: '<p>Ann Lee &lt;ann@x.test&gt;</p>',
      text: 'Ann',
    });
    expect(broadcastFor(content, nameless)).to.deep.include({
      subject: 'Hi there',
      html: '<p>Friend  &lt;b@x.test&gt;</p>',
      text: 'there',
    });
  });

  it('puts the contact’s unsubscribe link where RESEND_UNSUBSCRIBE_URL stands', function () {
    const r = broadcastFor({ subject: 'x', html: '<a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a>' }, ann);
    expect(r.html).to.equal('<a href="https://mail.test/p/tok">Unsubscribe</a>');
  });

  it('reads a contact property as contact.<key>, and its fallback where the contact has none', function () {
    const html = translateResend('{{{contact.company|your company}}}', 'html', broadcastVariable);
    expect(html).to.equal("{{ contact.company | 'your company' }}");
    expect(broadcastFor({ subject: 'x', html: '{{{contact.company|your company}}}' }, ann).html).to.equal(
      'your company',
    );
  });

  it('refuses another name, listing those it knows', function () {
    const e = refused('Hi {{{COMPANY}}}', 'subject', broadcastVariable);
    expect(e.message).to.equal(
      'subject line 1, column 4: {{{COMPANY}}} is not available in a broadcast: there are {{{FIRST_NAME}}}, {{{LAST_NAME}}}, {{{EMAIL}}}, {{{contact.<property>}}} and {{{RESEND_UNSUBSCRIBE_URL}}}',
    );
    expect(refused('{{{contact.a.b}}}', 'html', broadcastVariable).message).to.include('is not available');
  });

  context('shown back in Resend’s syntax', function () {
    const sources = [
      'Hi {{{FIRST_NAME|there}}}, {{{contact.last_name}}}',
      '<a href="{{{RESEND_UNSUBSCRIBE_URL}}}">x</a> {{{EMAIL|it\'s "me" \\ | ok}}}',
      '{{#if contact.first_name}}{{ contact.first_name | upper }}{{/if}} {{{contact.plan|free}}}',
    ];

    it('writes our placeholders as Resend’s, and keeps the others of ours', function () {
      const ours = translateResend(sources[0], 'subject', broadcastVariable);
      expect(broadcastInResendSyntax(ours)).to.equal('Hi {{{contact.first_name|there}}}, {{{contact.last_name}}}');
      expect(broadcastInResendSyntax(translateResend(sources[1], 'html', broadcastVariable))).to.equal(
        '<a href="{{{RESEND_UNSUBSCRIBE_URL}}}">x</a> {{{contact.email|it\'s "me" \\ | ok}}}',
      );
      expect(broadcastInResendSyntax('{{contact.first_name | there}} {{ preferences_url }}')).to.equal(
        '{{contact.first_name | there}} {{ preferences_url }}',
      );
    });

    it('reads back through the translation as what was stored', function () {
      for (const s of sources) {
        const ours = translateResend(s, 'html', broadcastVariable);
        expect(translateResend(broadcastInResendSyntax(ours), 'html', broadcastVariable), s).to.equal(ours);
      }
    });

    it('keeps ours a fallback that Resend’s syntax would read otherwise', function () {
      for (const tag of ["{{ contact.x | ' padded ' }}", "{{ contact.x | 'ends}' }}"])
        expect(broadcastInResendSyntax(tag)).to.equal(tag);
    });
  });
});
