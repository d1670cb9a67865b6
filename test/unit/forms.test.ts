import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import type { ContactProperty } from '../../src/modules/audience/contacts/contact-properties.js';
import {
  checkFields,
  checkOrigins,
  checkRedirectUrl,
  HONEYPOT,
  readSubmission,
  submittedList,
  submittedValues,
} from '../../src/modules/audience/forms/form-rules.js';
import { signConfirmToken, verifyConfirmToken } from '../../src/modules/audience/forms/confirm-token.js';
import { confirmationBody } from '../../src/modules/audience/forms/confirmation-mail.js';
import type { Form } from '../../src/modules/audience/forms/forms.repo.js';
import type { FormPage } from '../../src/modules/audience/forms/form-submissions.service.js';
import { confirmBody, formBody } from '../../src/api/form-html.js';
import { pageCsp } from '../../src/api/public-page.js';
import { signPreferenceToken, verifyPreferenceToken } from '../../src/modules/audience/preferences/preference-token.js';

const prop = (key: string, type: ContactProperty['type']): [string, ContactProperty] => [
  key,
  { projectId: 'prj_x', key, type, fallback: null, createdAt: 0 },
];
const DECLARED = new Map([
  prop('plan', 'string'),
  prop('seats', 'number'),
  prop('vip', 'boolean'),
  prop('since', 'date'),
]);
const FIELDS = ['email', 'first_name', 'plan', 'seats', 'vip', 'since'];

describe('signup form rules (docs/forms.md)', function () {
  context('a form’s fields', function () {
    for (const [given, want] of [
      [undefined, ['email']],
      [['first_name'], ['email', 'first_name']],
      [
        ['plan', 'email', 'last_name'],
        ['plan', 'email', 'last_name'],
      ],
    ] as const) {
      it(`${JSON.stringify(given)} → ${JSON.stringify(want)}`, function () {
        expect(checkFields(given, DECLARED)).to.deep.equal({ ok: true, value: want });
      });
    }
    it('refuses an unknown field and one given twice, naming its place', function () {
      expect(checkFields(['email', 'colour'], DECLARED)).to.include({ ok: false, field: 'fields[1]' });
      expect(checkFields(['plan', 'first_name', 'plan'], DECLARED)).to.include({ ok: false, field: 'fields[2]' });
    });
  });

  context('URLs a browser is sent to or comes from', function () {
    it('takes https, and plain http to a loopback host only where private addresses are allowed', function () {
      expect(checkRedirectUrl('https://shop.example/thanks?x=1', false)).to.deep.equal({
        ok: true,
        value: 'https://shop.example/thanks?x=1',
      });
      expect(checkRedirectUrl('http://shop.example/', true)).to.include({ ok: false, field: 'redirect_url' });
      expect(checkRedirectUrl('http://127.0.0.1:8080/', false)).to.include({ ok: false });
      expect(checkRedirectUrl('http://127.0.0.1:8080/', true)).to.include({ ok: true });
      expect(checkRedirectUrl('javascript:alert(1)', true)).to.include({ ok: false });
      expect(checkRedirectUrl('https://user:pw@shop.example/', false)).to.include({ ok: false });
    });
    it('keeps origins as browsers send them, once each, and refuses a path', function () {
      expect(
        checkOrigins(['https://Shop.example/', 'https://shop.example', 'https://shop.example:8443'], false),
      ).to.deep.equal({ ok: true, value: ['https://shop.example', 'https://shop.example:8443'] });
      expect(checkOrigins(['https://shop.example', 'https://shop.example/signup'], false)).to.include({
        ok: false,
        field: 'allowed_origins[1]',
      });
    });
  });

  context('a submission', function () {
    it('reads the page’s text as the properties’ types, the last of a repeated name having been taken', function () {
      const read = readSubmission(
        {
          email: ' Ann@Example.COM ',
          first_name: ' Ann ',
          plan: 'pro',
          seats: '3',
          vip: 'true',
          since: '2026-01-02',
          [HONEYPOT]: '',
        },
        FIELDS,
        DECLARED,
      );
      expect(read).to.deep.equal({
        ok: true,
        honeypot: false,
        email: 'ann@example.com',
        submitted: { first_name: 'Ann', properties: { plan: 'pro', seats: 3, vip: true, since: '2026-01-02' } },
      });
    });
    it('takes JSON values as they are typed, and sets nothing for an empty field', function () {
      expect(readSubmission({ email: 'a@b.example', seats: 2, vip: false, plan: '' }, FIELDS, DECLARED)).to.deep.equal({
        ok: true,
        honeypot: false,
        email: 'a@b.example',
        submitted: { properties: { seats: 2, vip: false } },
      });
    });
    it('names what is wrong', function () {
      expect(readSubmission({}, FIELDS, DECLARED)).to.include({ ok: false, field: 'email' });
      expect(readSubmission({ email: 'nope' }, FIELDS, DECLARED)).to.include({ ok: false, field: 'email' });
      expect(readSubmission({ email: ['a@b.example'] }, FIELDS, DECLARED)).to.include({ ok: false, field: 'email' });
      expect(readSubmission({ email: 'a@b.example', seats: 'many' }, FIELDS, DECLARED)).to.include({
        ok: false,
        field: 'seats',
      });
      expect(readSubmission({ email: 'a@b.example', last_name: 'X' }, FIELDS, DECLARED)).to.include({
        ok: false,
        field: 'last_name',
      });
      expect(readSubmission({ email: 'a@b.example', first_name: 'x'.repeat(201) }, FIELDS, DECLARED)).to.include({
        ok: false,
        field: 'first_name',
      });
    });
    it('sees a filled honeypot before anything else', function () {
      expect(readSubmission({ email: 'nope', [HONEYPOT]: 'http://spam.example' }, FIELDS, DECLARED)).to.deep.equal({
        ok: true,
        honeypot: true,
      });
    });
  });

  context('the signed links', function () {
    const key = randomBytes(32);
    it('a confirmation token names its submission, for this installation only, and is not a preference token', function () {
      const token = signConfirmToken(key, 'fsb_01jz0000000000000000000000');
      expect(token).to.match(/^[0-9a-z]{26}-[0-9a-f]{32}$/);
      expect(verifyConfirmToken(key, token)).to.equal('fsb_01jz0000000000000000000000');
      expect(verifyConfirmToken(key, token.toUpperCase())).to.equal('fsb_01jz0000000000000000000000');
      expect(verifyConfirmToken(randomBytes(32), token)).to.equal(null);
      expect(verifyConfirmToken(key, `${token.slice(0, -1)}${token.endsWith('0') ? '1' : '0'}`)).to.equal(null);
      const prefs = signPreferenceToken(key, 'con_01jz0000000000000000000000');
      expect(verifyPreferenceToken(key, prefs)).to.equal('con_01jz0000000000000000000000');
      expect(verifyConfirmToken(key, prefs)).to.equal(null);
    });
  });

  context('a submission applied to a contact', function () {
    const kim = { firstName: 'Kim', lastName: null, properties: { plan: 'team', vip: true } };
    const submitted = {
      first_name: 'Mallory',
      last_name: 'Lee',
      properties: { plan: 'free', seats: 4, vip: false, since: '2026-01-02' },
    };
    it('without a confirmation fills only what the contact lacks, and an unticked box fills nothing', function () {
      expect(submittedValues(kim, submitted, DECLARED, false)).to.deep.equal({
        firstName: 'Kim',
        lastName: 'Lee',
        properties: { plan: 'team', vip: true, seats: 4, since: '2026-01-02' },
      });
      expect(
        submittedValues(
          { firstName: null, lastName: null, properties: {} },
          { properties: { vip: false } },
          DECLARED,
          false,
        ).properties,
      ).to.deep.equal({});
    });
    it('confirmed by its owner sets every value submitted, but not one of a property no longer declared or retyped', function () {
      expect(submittedValues(kim, submitted, DECLARED, true)).to.deep.equal({
        firstName: 'Mallory',
        lastName: 'Lee',
        properties: { plan: 'free', vip: false, seats: 4, since: '2026-01-02' },
      });
      expect(
        submittedValues(kim, { properties: { colour: 'red', seats: 'many' } }, DECLARED, true).properties,
      ).to.deep.equal(kim.properties);
    });
    it('is listed for the confirmation page with the page’s labels', function () {
      expect(submittedList(submitted)).to.deep.equal([
        { label: 'First name', value: 'Mallory' },
        { label: 'Last name', value: 'Lee' },
        { label: 'Plan', value: 'free' },
        { label: 'Seats', value: '4' },
        { label: 'Vip', value: 'No' },
        { label: 'Since', value: '2026-01-02' },
      ]);
    });
  });

  context('the pages', function () {
    const page: FormPage = {
      id: 'frm_x',
      name: 'News',
      doubleOptIn: true,
      allowedOrigins: [],
      redirectOrigin: null,
      fields: [
        { key: 'email', label: 'Email address', type: 'email' },
        { key: 'seats', label: 'Seats', type: 'number' },
        { key: 'vip', label: 'Vip', type: 'boolean' },
      ],
    };
    const invalid = (html: string) =>
      [...html.matchAll(/<input [^>]*id="(f-[a-z_]+)"[^>]*aria-invalid="true"/g)].map((m) => m[1]);
    it('marks as invalid the field the error names, and only it', function () {
      expect(
        invalid(
          formBody(
            page,
            { email: 'a@b.example', seats: 'many' },
            { message: 'seats: must be a number', field: 'seats' },
          ),
        ),
      ).to.deep.equal(['f-seats']);
      expect(
        invalid(formBody(page, { email: 'nope' }, { message: 'email: is not an address', field: 'email' })),
      ).to.deep.equal(['f-email']);
      expect(invalid(formBody(page, {}, { message: 'vip: must be true or false', field: 'vip' }))).to.deep.equal([
        'f-vip',
      ]);
      expect(
        invalid(formBody(page, {}, { message: 'colour: is not a field of this form', field: 'colour' })),
      ).to.deep.equal([]);
      expect(invalid(formBody(page))).to.deep.equal([]);
    });
    it('shows on the confirmation page, escaped, the values confirming saves', function () {
      const html = confirmBody({
        formName: 'News',
        email: 'ann@example.com',
        confirmed: false,
        values: [{ label: 'First name', value: '<b>Mallory</b>' }],
        preferencesUrl: null,
      });
      expect(html).to.include('<dt>First name</dt><dd>&lt;b&gt;Mallory&lt;/b&gt;</dd>');
      expect(
        confirmBody({ formName: 'News', email: 'ann@example.com', confirmed: false, values: [], preferencesUrl: null }),
      ).to.not.include('<dl>');
    });
    it('lets the form go to its redirect_url’s origin, and nowhere else', function () {
      expect(pageCsp()).to.include("form-action 'self';");
      expect(pageCsp('https://shop.example')).to.include("form-action 'self' https://shop.example;");
    });
  });

  context('the confirmation mail', function () {
    it('escapes the form’s name and the address in its HTML as the templates do', function () {
      const form = { id: 'frm_x', name: 'Tom & Jerry <News>', from: 'a@b.example', confirmTemplateId: null } as Form;
      const body = confirmationBody(form, "o'neil@example.com", 'https://forms.example/f/frm_x/confirm/t', {
        properties: {},
      });
      expect(body.html).to.include('o&#39;neil@example.com').and.include('&quot;Tom &amp; Jerry &lt;News&gt;&quot;');
    });
  });
});
