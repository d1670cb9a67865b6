import { expect } from 'chai';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { expectError } from '../helpers/assert.js';
import { findEmail } from '../../src/modules/sending/emails/emails.repo.js';

const SIM = 'simulator.posthorn.test';
const JSON_TYPE = { 'content-type': 'application/json' };
const base = { from: 'a@example.test', to: [`delivered@${SIM}`], subject: 'Hello', text: 'hi' };

/** a JSON body whose `"Hello"` subject is replaced by these raw bytes, sent as they are */
const withSubjectBytes = (bytes: number[]) => {
  const [before, after] = JSON.stringify(base).split('"Hello"') as [string, string];
  return Buffer.concat([Buffer.from(`${before}"`), Buffer.from(bytes), Buffer.from(`"${after}`)]);
};

eachDatabase('request input: UTF-8, surrogates, NUL', (db) => {
  let api: TestApi;
  let t: Tenant;
  before(async function () {
    api = await startTestApi(db().store);
    t = await api.tenant();
  });
  after(async function () {
    await api.stop();
  });

  const emailCount = async () =>
    Number((await api.deps.store.knex('emails').where({ project_id: t.project.id }).count({ n: '*' }))[0].n);

  describe('a body that is not valid UTF-8', function () {
    const cases: Array<[string, number[]]> = [
      ['a lead byte followed by no continuation byte (C3 28)', [0x43, 0xc3, 0x28]],
      ['a byte UTF-8 never uses (FF)', [0x43, 0xff]],
      ['a surrogate encoded as UTF-8 (ED A0 80)', [0xed, 0xa0, 0x80]],
      ['an overlong encoding of "/" (C0 AF)', [0xc0, 0xaf]],
      ['a sequence cut short at the end of the string (E2 82)', [0xe2, 0x82]],
    ];
    for (const [what, bytes] of cases) {
      it(`refuses ${what} with 400 validation_error naming body, and stores nothing`, async function () {
        const before = await emailCount();
        const res = await t.api.raw('POST', '/v1/emails', { body: withSubjectBytes(bytes), headers: JSON_TYPE });
        const err = expectError(res, 400, 'validation_error', 'body');
        expect(err.message).to.equal('body: is not valid UTF-8');
        expect(await emailCount()).to.equal(before);
      });
    }

    it('accepts valid multi-byte UTF-8 and stores it as sent', async function () {
      const subject = 'Grüße 😀 中文';
      const res = await t.api.raw('POST', '/v1/emails', {
        body: withSubjectBytes([...Buffer.from(subject)]),
        headers: JSON_TYPE,
      });
      expect(res.status, res.text).to.equal(202);
      expect((await findEmail(api.deps.store.knex, t.project.id, res.body.id))!.subject).to.equal(subject);
    });

    it('refuses invalid UTF-8 on every route that takes a body', async function () {
      const res = await t.api.raw('POST', '/v1/api-keys', {
        body: Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]),
        headers: JSON_TYPE,
      });
      expectError(res, 400, 'validation_error', 'body');
    });
  });

  describe('a JSON string with a lone surrogate escape', function () {
    // the JSON text as a client writes it: JSON.stringify escapes a lone surrogate as \udXXX
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['a lone high surrogate in subject', { ...base, subject: 'x\ud800y' }, 'subject'],
      ['a lone low surrogate at the end of subject', { ...base, subject: 'x\udfff' }, 'subject'],
      ['a reversed pair in text', { ...base, text: '\ude00\ud83d' }, 'text'],
      ['a lone surrogate in a recipient', { ...base, to: [`delivered@${SIM}`, 'b\udc00@example.test'] }, 'to[1]'],
      ['a lone surrogate in a tag value', { ...base, tags: { order: '\ud801' } }, 'tags.order'],
      ['a lone surrogate in a key', { ...base, tags: { ['k\ud800']: 'v' } }, 'tags'],
    ];
    for (const [what, body, field] of cases) {
      it(`refuses ${what}: 400 validation_error naming ${field}`, async function () {
        const text = JSON.stringify(body);
        expect(text).to.match(/\\ud[89a-f]/);
        const before = await emailCount();
        const err = expectError(
          await t.api.raw('POST', '/v1/emails', { body: text, headers: JSON_TYPE }),
          400,
          'validation_error',
          field,
        );
        expect(err.message).to.match(/lone UTF-16 surrogate/);
        expect(await emailCount()).to.equal(before);
      });
    }

    it('accepts an escaped surrogate pair and stores the character it makes', async function () {
      const text = JSON.stringify({ ...base, subject: 'smile ' }).replace('smile ', 'smile \\ud83d\\ude00');
      const res = await t.api.raw('POST', '/v1/emails', { body: text, headers: JSON_TYPE });
      expect(res.status, res.text).to.equal(202);
      expect((await findEmail(api.deps.store.knex, t.project.id, res.body.id))!.subject).to.equal('smile 😀');
    });

    it('accepts an escaped backslash followed by "ud800", which is no escape of a surrogate', async function () {
      const res = await t.api.post('/v1/emails', { ...base, subject: 'path \\ud800' });
      expect(res.status, res.text).to.equal(202);
      expect((await findEmail(api.deps.store.knex, t.project.id, res.body.id))!.subject).to.equal('path \\ud800');
    });
  });

  describe('NUL in the subject', function () {
    it('refuses U+0000 in subject with 400 validation_error naming subject, as in headers', async function () {
      const before = await emailCount();
      const err = expectError(
        await t.api.post('/v1/emails', { ...base, subject: 'before\u0000after' }),
        400,
        'validation_error',
        'subject',
      );
      expect(err.message).to.match(/NUL/);
      expectError(
        await t.api.post('/v1/emails', { ...base, headers: { 'X-Note': 'a\u0000b' } }),
        400,
        'validation_error',
        'headers.X-Note',
      );
      expect(await emailCount()).to.equal(before);
    });

    it('refuses a template send whose subject renders with NUL: 400 invalid_variables, nothing stored', async function () {
      const id = `nul-${Date.now().toString(36)}`;
      expect(
        (
          await t.api.post('/v1/templates', {
            id,
            subject: 'Order {{ order }}',
            text: 'Thanks',
            variables: { order: {} },
          })
        ).status,
      ).to.equal(201);
      const before = await emailCount();
      const err = expectError(
        await t.api.post('/v1/emails', {
          from: base.from,
          to: base.to,
          template_id: id,
          variables: { order: 'A\u0000B' },
        }),
        400,
        'invalid_variables',
        'variables',
      );
      expect(err.message).to.match(/NUL/);
      expect(await emailCount()).to.equal(before);
      const ok = await t.api.post('/v1/emails', {
        from: base.from,
        to: base.to,
        template_id: id,
        variables: { order: 'A-1' },
      });
      expect(ok.status, ok.text).to.equal(202);
      expect(ok.body.subject).to.equal('Order A-1');
    });

    it('refuses a template whose own subject holds NUL when it is saved, naming subject', async function () {
      const id = `nul-src-${Date.now().toString(36)}`;
      expectError(
        await t.api.post('/v1/templates', {
          id,
          subject: 'Order\u0000{{ order }}',
          text: 'Thanks',
          variables: { order: {} },
        }),
        400,
        'validation_error',
        'subject',
      );
      expectError(await t.api.get(`/v1/templates/${id}`), 404, 'not_found');
    });
  });
});
