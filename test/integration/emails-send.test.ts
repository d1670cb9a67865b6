import { expect } from 'chai';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { expectError } from '../helpers/assert.js';
import { waitFor } from '../helpers/wait.js';
import type { Client } from '../helpers/http.js';
import { addSuppression } from '../../src/modules/sending/suppressions/suppressions.repo.js';
import { eventsOfEmail } from '../../src/modules/notifying/events/events.repo.js';
import { setProject } from '../../src/modules/account/projects/projects.service.js';

const SIM = 'simulator.posthorn.test';
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const base = { from: 'Sender <hello@example.test>', to: [`delivered@${SIM}`], subject: 'Hello', text: 'hi' };

async function waitEmail(api: Client, id: string, pred: (e: any) => boolean, ms = 8000) {
  return waitFor(
    async () => {
      const r = await api.get(`/v1/emails/${id}`);
      return pred(r.body) ? r.body : null;
    },
    ms,
    `email ${id} to reach the expected state`,
  );
}

eachDatabase('POST /v1/emails (interface §4.1)', (db) => {
  let api: TestApi;
  let t: Tenant;
  before(async function () {
    api = await startTestApi(db().store, {}, { roles: { mta: true } });
    t = await api.tenant();
  });
  after(async function () {
    await api.stop();
  });

  describe('validation: 400 validation_error naming the field', function () {
    const long = (n: number) => 'x'.repeat(n);
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['an unknown field', { ...base, colour: 'blue' }, 'colour'],
      ['a missing from', { to: base.to, subject: 's', text: 't' }, 'from'],
      ['a from that is not an address', { ...base, from: 'not an address' }, 'from'],
      ['a recipient over 254 characters', { ...base, to: [`${long(250)}@ex.test`] }, 'to[0]'],
      ['a recipient that is not an address', { ...base, to: [base.to[0], 'nobody'] }, 'to[1]'],
      ['a cc that is not an address', { ...base, cc: ['a@b@c'] }, 'cc[0]'],
      ['a bcc with a line break', { ...base, bcc: ['a@example.test\r\nRCPT TO:<x@y.z>'] }, 'bcc[0]'],
      [
        '51 recipients across to, cc and bcc',
        {
          ...base,
          to: Array.from({ length: 20 }, (_, i) => `a${i}@x.test`),
          cc: Array.from({ length: 20 }, (_, i) => `b${i}@x.test`),
          bcc: Array.from({ length: 11 }, (_, i) => `c${i}@x.test`),
        },
        'to',
      ],
      ['51 recipients in to', { ...base, to: Array.from({ length: 51 }, (_, i) => `a${i}@x.test`) }, 'to'],
      ['no recipient', { ...base, to: [] }, 'to'],
      ['a reply_to that is not an address', { ...base, reply_to: ['nope'] }, 'reply_to[0]'],
      ['an empty subject', { ...base, subject: '' }, 'subject'],
      ['a subject of 999 characters', { ...base, subject: long(999) }, 'subject'],
      ['no subject', { from: base.from, to: base.to, text: 't' }, 'subject'],
      ['neither html nor text', { from: base.from, to: base.to, subject: 's' }, 'html'],
      ['html over 1,000,000 characters', { ...base, html: long(1_000_001) }, 'html'],
      ['text over 1,000,000 characters', { ...base, text: long(1_000_001) }, 'text'],
      ['html with a NUL (PostgreSQL text cannot hold it)', { ...base, html: '<p>a\u0000b</p>' }, 'html'],
      ['text with a NUL', { ...base, text: 'a\u0000b' }, 'text'],
      ['template_id with subject', { ...base, template_id: 'welcome' }, 'template_id'],
      ['a template_id of the wrong form', { from: base.from, to: base.to, template_id: 'Welcome!' }, 'template_id'],
      [
        'a template send naming no template of the project',
        { from: base.from, to: base.to, template_id: 'welcome', variables: {} },
        'template_id',
      ],
      [
        'template_version 0',
        { from: base.from, to: base.to, template_id: 'welcome', template_version: 0 },
        'template_version',
      ],
      ['variables without a template', { ...base, variables: { a: 1 } }, 'variables'],
      [
        'a language of the wrong form',
        { from: base.from, to: base.to, template_id: 'welcome', language: 'english' },
        'language',
      ],
      ['a tag key of the wrong form', { ...base, tags: { 'bad key': 'x' } }, 'tags.bad key'],
      ['a tag value over 256 characters', { ...base, tags: { plan: long(257) } }, 'tags.plan'],
      ['a tag value that is not a string', { ...base, tags: { n: 1 } }, 'tags.n'],
      ['scheduled_at without an offset', { ...base, scheduled_at: '2030-01-01T10:00:00' }, 'scheduled_at'],
      ['scheduled_at that is not a date', { ...base, scheduled_at: 'tomorrow' }, 'scheduled_at'],
      [
        'scheduled_at more than 30 days ahead',
        { ...base, scheduled_at: new Date(Date.now() + 31 * 86_400_000).toISOString() },
        'scheduled_at',
      ],
      [
        '11 attachments',
        { ...base, attachments: Array.from({ length: 11 }, (_, i) => ({ filename: `${i}.txt`, content: b64('x') })) },
        'attachments',
      ],
      [
        'an unknown attachment field',
        { ...base, attachments: [{ filename: 'a.txt', content: b64('x'), size: 1 }] },
        'attachments[0].size',
      ],
      [
        'attachment content that is not base64',
        { ...base, attachments: [{ filename: 'a.txt', content: 'not base64!' }] },
        'attachments[0].content',
      ],
      [
        'an empty attachment content',
        { ...base, attachments: [{ filename: 'a.txt', content: '' }] },
        'attachments[0].content',
      ],
      [
        'an executable by name',
        { ...base, attachments: [{ filename: 'invoice.pdf.exe', content: b64('hello') }] },
        'attachments[0].filename',
      ],
      [
        'a script by name',
        { ...base, attachments: [{ filename: 'run.PS1', content: b64('hello') }] },
        'attachments[0].filename',
      ],
      [
        'an executable by content (MZ)',
        {
          ...base,
          attachments: [
            { filename: 'report.pdf', content: b64(Buffer.concat([Buffer.from('MZ'), Buffer.alloc(200)])) },
          ],
        },
        'attachments[0].content',
      ],
      [
        'an executable by content (ELF)',
        {
          ...base,
          attachments: [
            {
              filename: 'data.bin',
              content: b64(Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46]), Buffer.alloc(100)])),
            },
          ],
        },
        'attachments[0].content',
      ],
      [
        'a script by content (shebang)',
        { ...base, attachments: [{ filename: 'notes.txt', content: b64('#!/bin/sh\nrm -rf /\n') }] },
        'attachments[0].content',
      ],
      ['an attachment without filename', { ...base, attachments: [{ content: b64('x') }] }, 'attachments[0].filename'],
      [
        'an attachment with both content and path',
        { ...base, attachments: [{ filename: 'a.txt', content: b64('x'), path: 'https://files.test/a.txt' }] },
        'attachments[0]',
      ],
      [
        'an attachment path over http',
        { ...base, attachments: [{ filename: 'a.txt', path: 'http://files.test/a.txt' }] },
        'attachments[0].path',
      ],
      [
        'an attachment content_type of the wrong form',
        { ...base, attachments: [{ filename: 'a.txt', content: b64('x'), content_type: 'text' }] },
        'attachments[0].content_type',
      ],
      [
        'an attachment content_id of the wrong form',
        { ...base, attachments: [{ filename: 'a.png', content: b64('x'), content_id: 'has space' }] },
        'attachments[0].content_id',
      ],
      [
        'attachments over 10 MB in total',
        {
          ...base,
          attachments: [
            { filename: 'a.bin', content: b64(Buffer.alloc(6 * 1024 * 1024, 1)) },
            { filename: 'b.bin', content: b64(Buffer.alloc(5 * 1024 * 1024, 1)) },
          ],
        },
        'attachments',
      ],
      [
        '21 custom headers',
        { ...base, headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v'])) },
        'headers',
      ],
      ['a header the service sets (From)', { ...base, headers: { From: 'evil@example.test' } }, 'headers.From'],
      [
        'a header the service sets (content-type, any case)',
        { ...base, headers: { 'content-type': 'text/plain' } },
        'headers.content-type',
      ],
      [
        'a header the service sets (DKIM-Signature)',
        { ...base, headers: { 'DKIM-Signature': 'v=1' } },
        'headers.DKIM-Signature',
      ],
      [
        'a header value with CR/LF',
        { ...base, headers: { 'X-Test': 'a\r\nBcc: victim@example.test' } },
        'headers.X-Test',
      ],
      ['a header name of the wrong form', { ...base, headers: { '1bad': 'x' } }, 'headers.1bad'],
      ['a header value over 998 characters', { ...base, headers: { 'X-Long': long(999) } }, 'headers.X-Long'],
      ['a header name with CR/LF', { ...base, headers: { 'X-A\r\nBcc': 'x' } }, 'headers.X-A\r\nBcc'],
      ['a subject with a line break', { ...base, subject: 'Hi\r\nBcc: victim@example.test' }, 'subject'],
      ['a reply_to over 254 characters', { ...base, reply_to: [`${long(250)}@ex.test`] }, 'reply_to[0]'],
      [
        'an attachment path over 2000 characters',
        { ...base, attachments: [{ filename: 'a.txt', path: `https://files.test/${long(2000)}` }] },
        'attachments[0].path',
      ],
      [
        'an attachment path that is not a URL',
        { ...base, attachments: [{ filename: 'a.txt', path: 'https://' }] },
        'attachments[0].path',
      ],
      [
        'a filename taken from a path over 255 characters',
        { ...base, attachments: [{ path: `https://files.test/${long(300)}.txt` }] },
        'attachments[0].filename',
      ],
      [
        'a Python script by name',
        { ...base, attachments: [{ filename: 'tool.py', content: b64('print(1)') }] },
        'attachments[0].filename',
      ],
      [
        'attachments over 10,000,000 bytes in total',
        {
          ...base,
          attachments: [
            { filename: 'a.bin', content: b64(Buffer.alloc(5_000_000, 1)) },
            { filename: 'b.bin', content: b64(Buffer.alloc(5_000_001, 1)) },
          ],
        },
        'attachments',
      ],
    ];
    for (const [what, body, field] of cases) {
      it(`refuses ${what}`, async function () {
        expectError(await t.api.post('/v1/emails', body), 400, 'validation_error', field);
      });
    }

    it('refuses an Idempotency-Key over 255 characters', async function () {
      expectError(
        await t.api.post('/v1/emails', base, { 'Idempotency-Key': 'k'.repeat(256) }),
        400,
        'validation_error',
        'Idempotency-Key',
      );
    });

    it('refuses an Idempotency-Key with a character that is not printable ASCII', async function () {
      expectError(
        await t.api.post('/v1/emails', base, { 'Idempotency-Key': 'order-\t-1' }),
        400,
        'validation_error',
        'Idempotency-Key',
      );
    });

    it('accepts base64 content without its padding', async function () {
      const res = await t.api.post('/v1/emails', { ...base, attachments: [{ filename: 'hi.txt', content: 'aGk' }] });
      expect(res.status, res.text).to.equal(202);
    });

    it('accepts an IDN From and stores the recipient domain as its A-label', async function () {
      const res = await t.api.post('/v1/emails', {
        ...base,
        from: 'Shop <hello@bücher.example>',
        to: ['kunde@bücher.example'],
      });
      expect(res.status, res.text).to.equal(202);
      expect(res.body.recipients[0].address).to.equal('kunde@xn--bcher-kva.example');
      const listed = await t.api.get(`/v1/emails?to=${encodeURIComponent('Kunde <KUNDE@bücher.example>')}`);
      expect(listed.body.data.map((e: { id: string }) => e.id)).to.deep.equal([res.body.id]);
    });

    it('stores nothing for a refused request', async function () {
      const before = (await t.api.get('/v1/emails?limit=100')).body.data.length;
      await t.api.post('/v1/emails', { ...base, to: ['nobody'] });
      expect((await t.api.get('/v1/emails?limit=100')).body.data.length).to.equal(before);
    });
  });

  describe('acceptance', function () {
    it('answers 202 queued, attempts 0, with the interface §2.1 fields', async function () {
      const res = await t.api.post('/v1/emails', {
        ...base,
        cc: ['Carol <carol@example.test>'],
        bcc: ['dave@example.test'],
        reply_to: ['replies@example.test'],
        tags: { plan: 'pro' },
      });
      expect(res.status, res.text).to.equal(202);
      const e = res.body;
      expect(e.id).to.match(/^msg_[0-9a-z]{26}$/);
      expect(e).to.include({
        object: 'email',
        status: 'queued',
        attempts: 0,
        simulated: true,
        environment: 'test',
        subject: 'Hello',
        template_id: null,
        provider_message_id: null,
        scheduled_at: null,
      });
      expect(e.request_id).to.equal(res.headers.get('request-id'));
      expect(e.to).to.deep.equal(base.to);
      expect(e.cc).to.deep.equal(['Carol <carol@example.test>']);
      expect(e.bcc).to.deep.equal(['dave@example.test']);
      expect(e.reply_to).to.deep.equal(['replies@example.test']);
      expect(e.tags).to.deep.equal({ plan: 'pro' });
      expect(
        e.recipients.map(
          (r: { address: string; kind: string; status: string }) => `${r.kind}:${r.address}:${r.status}`,
        ),
      ).to.deep.equal([`to:delivered@${SIM}:queued`, 'cc:carol@example.test:queued', 'bcc:dave@example.test:queued']);
      expect(e.created_at).to.match(/\.\d{3}Z$/);
      // the 202 was committed: the email is there to read
      expect((await t.api.get(`/v1/emails/${e.id}`)).body.id).to.equal(e.id);
    });

    it('accepts IDN recipient domains, display names, an address of 254 characters and 50 recipients', async function () {
      const to = Array.from({ length: 47 }, (_, i) => `r${i}@example.test`);
      const longest = `${'a'.repeat(254 - '@example.test'.length)}@example.test`;
      const res = await t.api.post('/v1/emails', {
        ...base,
        to: [...to, 'Jörg <joerg@bücher.example>', longest],
        cc: ['"Last, First" <first@example.test>'],
      });
      expect(res.status, res.text).to.equal(202);
      expect(res.body.recipients).to.have.length(50);
      expect(res.body.recipients.map((r: { address: string }) => r.address))
        .to.include('joerg@xn--bcher-kva.example')
        .and.to.include(longest);
    });

    it('accepts a message at the limits: subject 998, html and text of 1,000,000 characters, 10 attachments', async function () {
      const res = await t.api.post('/v1/emails', {
        ...base,
        subject: 's'.repeat(998),
        html: `<p>${'h'.repeat(1_000_000 - 7)}</p>`,
        text: 't'.repeat(1_000_000),
        attachments: Array.from({ length: 10 }, (_, i) => ({
          filename: `f${i}.txt`,
          content: b64(`file ${i}`),
          ...(i === 0 ? { content_id: 'logo.png', content_type: 'image/png' } : {}),
        })),
        headers: { 'List-Unsubscribe': '<mailto:unsub@example.test>', 'X-Campaign': 'c1' },
      });
      expect(res.status, res.text.slice(0, 300)).to.equal(202);
    });
  });

  describe('error codes', function () {
    it('401 without a key', async function () {
      expectError(await api.anonymous.post('/v1/emails', base), 401, 'unauthorized');
    });

    it('403 forbidden without emails:send', async function () {
      const k = await t.newKey({ scopes: ['emails:read'] });
      expectError(await k.api.post('/v1/emails', base), 403, 'forbidden');
    });

    it('403 account_suspended for a suspended project', async function () {
      const s = await api.tenant();
      await s.suspend();
      expectError(await s.api.post('/v1/emails', base), 403, 'account_suspended');
    });

    it('403 account_not_approved for a live key of a project not approved', async function () {
      const u = await api.tenant({ approved: false, mode: 'live' });
      expectError(
        await u.api.post('/v1/emails', { ...base, to: ['someone@example.test'] }),
        403,
        'account_not_approved',
      );
      // test keys work meanwhile
      const test = await u.newKey({ mode: 'test' });
      expect((await test.api.post('/v1/emails', base)).status).to.equal(202);
    });

    it('422 domain_not_verified for a live send from a domain that is not verified here', async function () {
      const l = await api.tenant({ mode: 'live' });
      expectError(
        await l.api.post('/v1/emails', { ...base, from: 'a@unknown-domain.example' }),
        422,
        'domain_not_verified',
      );
      const d = (await l.api.post('/v1/domains', { domain: `pending-${Date.now()}.example` })).body;
      expectError(await l.api.post('/v1/emails', { ...base, from: `a@${d.domain}` }), 422, 'domain_not_verified');
    });

    it('422 recipient_suppressed when every recipient is suppressed, and nothing is stored', async function () {
      const s = await api.tenant();
      for (const a of ['gone@example.test', 'left@example.test'])
        await addSuppression(api.deps.store.knex, {
          projectId: s.project.id,
          address: a,
          reason: 'manual',
          emailId: null,
          createdAt: Date.now(),
        });
      expectError(
        await s.api.post('/v1/emails', { ...base, to: ['Gone <GONE@example.test>'], cc: ['left@example.test'] }),
        422,
        'recipient_suppressed',
      );
      expect((await s.api.get('/v1/emails')).body.data).to.have.length(0);
    });

    it('429 daily_limit_exceeded and quota_exhausted count live recipients', async function () {
      const l = await api.tenant({ mode: 'live' });
      const domain = `limits-${Date.now()}.example`;
      await api.deps.store.knex('domains').insert({
        id: `dom_${Date.now().toString(36).padStart(26, '0')}`,
        project_id: l.project.id,
        name: domain,
        status: 'verified',
        dkim_token: `tok${Date.now()}`,
        active_selector: 'ph1',
        created_at: Date.now(),
        updated_at: Date.now(),
      });
      await setProject(api.deps, l.project.id, { limits: { daily: 3 } });
      const live = { ...base, from: `a@${domain}`, to: ['a@example.test', 'b@example.test'] };
      expect((await l.api.post('/v1/emails', live)).status).to.equal(202);
      expectError(await l.api.post('/v1/emails', live), 429, 'daily_limit_exceeded');
      expect((await l.api.post('/v1/emails', { ...live, to: ['c@example.test'] })).status).to.equal(202);
      await setProject(api.deps, l.project.id, { limits: { daily: 0, monthly: 4 } });
      expectError(await l.api.post('/v1/emails', live), 429, 'quota_exhausted');
      // test keys never count
      const test = await l.newKey({ mode: 'test' });
      expect((await test.api.post('/v1/emails', live)).status).to.equal(202);
    });
  });

  describe('Idempotency-Key', function () {
    it('answers the original response to the same key and body, and 409 to a different body', async function () {
      const key = `order-${Date.now()}`;
      const first = await t.api.post('/v1/emails', base, { 'Idempotency-Key': key });
      expect(first.status).to.equal(202);
      const again = await t.api.post(
        '/v1/emails',
        { text: 'hi', subject: 'Hello', to: base.to, from: base.from },
        { 'Idempotency-Key': key },
      );
      expect(again.status).to.equal(202);
      expect(again.body.id).to.equal(first.body.id);
      expectError(
        await t.api.post('/v1/emails', { ...base, subject: 'Other' }, { 'Idempotency-Key': key }),
        409,
        'idempotency_conflict',
      );
      const ids = (await t.api.get('/v1/emails?limit=100')).body.data.filter(
        (e: { id: string }) => e.id === first.body.id,
      );
      expect(ids).to.have.length(1);
    });

    it('keeps keys per project', async function () {
      const other = await api.tenant();
      const key = `shared-${Date.now()}`;
      const a = await t.api.post('/v1/emails', base, { 'Idempotency-Key': key });
      const b = await other.api.post('/v1/emails', base, { 'Idempotency-Key': key });
      expect(a.status).to.equal(202);
      expect(b.status).to.equal(202);
      expect(a.body.id).to.not.equal(b.body.id);
    });

    it('stores one email for concurrent requests with one key: the others get the original or 409', async function () {
      const key = `burst-${Date.now()}`;
      const replies = await Promise.all(
        Array.from({ length: 8 }, () => t.api.post('/v1/emails', base, { 'Idempotency-Key': key })),
      );
      const ok = replies.filter((r) => r.status === 202);
      const conflicts = replies.filter((r) => r.status === 409);
      expect(ok.length + conflicts.length).to.equal(8);
      expect(new Set(ok.map((r) => r.body.id)).size).to.equal(1);
      for (const c of conflicts) expect(c.body.error.code).to.equal('idempotency_conflict');
    });

    it('frees the key when the request was refused, so that a corrected retry goes through', async function () {
      const key = `fix-${Date.now()}`;
      const s = await api.tenant();
      await addSuppression(api.deps.store.knex, {
        projectId: s.project.id,
        address: 'x@example.test',
        reason: 'manual',
        emailId: null,
        createdAt: Date.now(),
      });
      expectError(
        await s.api.post('/v1/emails', { ...base, to: ['x@example.test'] }, { 'Idempotency-Key': key }),
        422,
        'recipient_suppressed',
      );
      expect(
        (await s.api.post('/v1/emails', { ...base, to: ['x@example.test'] }, { 'Idempotency-Key': key })).status,
      ).to.equal(422);
    });
  });

  describe('suppression list', function () {
    it('skips suppressed recipients with email.suppressed and sends to the others', async function () {
      const s = await api.tenant();
      await addSuppression(api.deps.store.knex, {
        projectId: s.project.id,
        address: 'blocked@example.test',
        reason: 'bounce',
        emailId: null,
        createdAt: Date.now(),
      });
      const res = await s.api.post('/v1/emails', { ...base, to: ['blocked@example.test', `delivered@${SIM}`] });
      expect(res.status).to.equal(202);
      expect(
        res.body.recipients.find((r: { address: string }) => r.address === 'blocked@example.test').status,
      ).to.equal('suppressed');
      const done = await waitEmail(s.api, res.body.id, (e) => e.status === 'accepted');
      expect(done.recipients.map((r: { status: string }) => r.status)).to.deep.equal(['suppressed', 'delivered']);
      const events = await eventsOfEmail(api.deps.store.knex, res.body.id);
      expect(events.filter((e) => e.type === 'email.suppressed').map((e) => e.recipient)).to.deep.equal([
        'blocked@example.test',
      ]);
      // in the order they happened: skipped at the accept, then sent
      expect(events.map((e) => e.type)).to.deep.equal(['email.suppressed', 'email.sent', 'email.delivered']);
      // email.sent names a recipient the provider took, not the skipped one listed first
      expect(events.find((e) => e.type === 'email.sent')!.recipient).to.equal(`delivered@${SIM}`);
      expect(events.find((e) => e.type === 'email.sent')!.data.recipient).to.equal(`delivered@${SIM}`);
      // details.reason says why the address is on the list
      expect(events.find((e) => e.type === 'email.suppressed')!.data.details).to.deep.equal({ reason: 'bounce' });
    });

    it('marks an email suppressed when every recipient was suppressed by the time it left', async function () {
      const s = await api.tenant();
      const res = await s.api.post('/v1/emails', {
        ...base,
        to: ['later@example.test'],
        scheduled_at: new Date(Date.now() + 1500).toISOString(),
      });
      expect(res.body.status).to.equal('scheduled');
      await addSuppression(api.deps.store.knex, {
        projectId: s.project.id,
        address: 'later@example.test',
        reason: 'manual',
        emailId: null,
        createdAt: Date.now(),
      });
      const done = await waitEmail(s.api, res.body.id, (e) => e.status === 'suppressed');
      expect(done.recipients[0].status).to.equal('suppressed');
      // LIFECYCLE: attempts counts transactions started, and none was
      expect(done.attempts).to.equal(0);
      const events = await eventsOfEmail(api.deps.store.knex, res.body.id);
      expect(events.find((e) => e.type === 'email.suppressed')!.data.details).to.deep.equal({ reason: 'manual' });
    });

    it('counts the attempt of a scheduled email when some of its recipients are left to send to', async function () {
      const s = await api.tenant();
      const res = await s.api.post('/v1/emails', {
        ...base,
        to: ['later2@example.test', `delivered@${SIM}`],
        scheduled_at: new Date(Date.now() + 1500).toISOString(),
      });
      await addSuppression(api.deps.store.knex, {
        projectId: s.project.id,
        address: 'later2@example.test',
        reason: 'manual',
        emailId: null,
        createdAt: Date.now(),
      });
      const done = await waitEmail(s.api, res.body.id, (e) => e.status === 'accepted');
      expect(done.recipients.map((r: { status: string }) => r.status)).to.deep.equal(['suppressed', 'delivered']);
      expect(done.attempts).to.equal(1);
    });
  });

  describe('test-key simulation (CONTRACT §4, LIFECYCLE Test keys)', function () {
    const sendTo = async (local: string) =>
      (await t.api.post('/v1/emails', { ...base, to: [`${local}@${SIM}`] })).body.id as string;
    const types = async (id: string) => (await eventsOfEmail(api.deps.store.knex, id)).map((e) => e.type);

    it('delivered@ → accepted, recipient delivered, email.sent and email.delivered flagged simulated', async function () {
      const id = await sendTo('delivered');
      const e = await waitEmail(t.api, id, (x) => x.status === 'accepted' && x.recipients[0].status === 'delivered');
      expect(e.attempts).to.equal(1);
      // interface §2.1: set once a provider has the message; the simulator stands for the receiving server
      expect(e.provider_message_id)
        .to.be.a('string')
        .and.match(/^<.+@.+>$/);
      const events = await eventsOfEmail(api.deps.store.knex, id);
      expect(events.map((x) => x.type)).to.deep.equal(['email.sent', 'email.delivered']);
      expect(events.every((x) => x.simulated)).to.equal(true);
      expect(events[1].data).to.include({
        email_id: id,
        environment: 'test',
        recipient: `delivered@${SIM}`,
        subject: 'Hello',
      });
    });

    it('bounced@ → failed, recipient bounced Permanent, and the address is not suppressed', async function () {
      const id = await sendTo('bounced');
      const e = await waitEmail(t.api, id, (x) => x.status === 'failed');
      expect(e.recipients[0].status).to.equal('bounced');
      expect(await types(id)).to.deep.equal(['email.bounced', 'email.failed']);
      const bounce = (await eventsOfEmail(api.deps.store.knex, id))[0];
      expect((bounce.data.details as { bounce_type: string }).bounce_type).to.equal('Permanent');
      expect(await api.deps.store.knex('suppressions').where({ project_id: t.project.id })).to.have.length(0);
    });

    it('complained@ → accepted, recipient complained, email.complained', async function () {
      const id = await sendTo('complained');
      const e = await waitEmail(t.api, id, (x) => x.recipients[0].status === 'complained');
      expect(e.status).to.equal('accepted');
      expect(await types(id)).to.deep.equal(['email.sent', 'email.delivered', 'email.complained']);
    });

    it('delayed@ → email.delivery_delayed, then delivered', async function () {
      const id = await sendTo('delayed');
      // The email's row and its recipients are read by two statements: under load a read can fall
      // between them and the retry's commit, recipients delivered beside the email's older counter.
      const e = await waitEmail(t.api, id, (x) => x.recipients[0].status === 'delivered' && x.attempts >= 2, 10_000);
      expect(e.attempts).to.equal(2);
      // accepted on the queue worker's simulated retry: a provider message id all the same
      expect(e.provider_message_id)
        .to.be.a('string')
        .and.match(/^<.+@.+>$/);
      expect(await types(id)).to.deep.equal(['email.delivery_delayed', 'email.sent', 'email.delivered']);
      // the queue worker ended this walk: like test mail that ends at the accept, it leaves no queue row
      expect(await api.deps.store.knex('outbound_queue').where({ email_id: id })).to.deep.equal([]);
    });

    it('test mail due now is simulated as it is stored: no queue worker needed, the 202 still shows it queued', async function () {
      // an API with no MTA: whatever the email shows next was written by the accepting transaction
      const alone = await startTestApi(db().store);
      try {
        const u = await alone.tenant();
        const send = async (local: string) => {
          const res = await u.api.post('/v1/emails', { ...base, to: [`${local}@${SIM}`] });
          expect(res.status).to.equal(202);
          expect(res.body).to.include({ status: 'queued', attempts: 0 });
          return (await u.api.get(`/v1/emails/${res.body.id}`)).body;
        };
        const delivered = await send('delivered');
        expect(delivered).to.include({ status: 'accepted', attempts: 1 });
        expect(delivered.recipients[0].status).to.equal('delivered');
        expect(await types(delivered.id)).to.deep.equal(['email.sent', 'email.delivered']);
        const bounced = await send('bounced');
        expect(bounced.status).to.equal('failed');
        expect(await types(bounced.id)).to.deep.equal(['email.bounced', 'email.failed']);
        // a simulated delay waits in the queue for its retry, like a live one
        const delayed = await send('delayed');
        expect(delayed).to.include({ status: 'queued', attempts: 1 });
        expect(delayed.recipients[0].status).to.equal('deferred');
        expect(await types(delayed.id)).to.deep.equal(['email.delivery_delayed']);
        const [row] = (await alone.deps.store.knex('outbound_queue').where({ email_id: delayed.id })) as Array<{
          state: string;
          next_attempt_at: number;
        }>;
        expect(row.state).to.equal('queued');
        expect(Number(row.next_attempt_at)).to.be.greaterThan(Date.now());
        // scheduled test mail waits for its time
        const later = await u.api.post('/v1/emails', {
          ...base,
          to: [`delivered@${SIM}`],
          scheduled_at: new Date(Date.now() + 60_000).toISOString(),
        });
        expect((await u.api.get(`/v1/emails/${later.body.id}`)).body).to.include({ status: 'scheduled', attempts: 0 });
      } finally {
        await alone.stop();
      }
    });

    it('ambiguous@ → ambiguous, and it stays so', async function () {
      const id = await sendTo('ambiguous');
      const e = await waitEmail(t.api, id, (x) => x.status === 'ambiguous');
      expect(e.recipients[0].status).to.equal('ambiguous');
      expect(e.status_reason).to.be.a('string');
      await new Promise((r) => setTimeout(r, 1500));
      const later = (await t.api.get(`/v1/emails/${id}`)).body;
      expect(later.status).to.equal('ambiguous');
      expect(later.attempts).to.equal(1);
      // said once, in the transaction that made it ambiguous
      expect(await types(id)).to.deep.equal(['email.ambiguous']);
    });
  });

  describe('scheduling and PATCH /v1/emails/{id}', function () {
    it('answers 202 scheduled with email.scheduled, and releases it when due', async function () {
      const at = new Date(Date.now() + 1200);
      const res = await t.api.post('/v1/emails', { ...base, scheduled_at: at.toISOString().replace('Z', '+00:00') });
      expect(res.status).to.equal(202);
      expect(res.body.status).to.equal('scheduled');
      expect(res.body.scheduled_at).to.equal(at.toISOString());
      expect((await eventsOfEmail(api.deps.store.knex, res.body.id)).map((e) => e.type)).to.deep.equal([
        'email.scheduled',
      ]);
      const done = await waitEmail(t.api, res.body.id, (x) => x.status === 'accepted');
      expect(Date.parse(done.updated_at)).to.be.at.least(at.getTime());
      // simulated by the worker when due, and finished: no queue row is left
      expect(await api.deps.store.knex('outbound_queue').where({ email_id: res.body.id })).to.deep.equal([]);
    });

    it('reschedules a waiting email, in UTC, within 30 days', async function () {
      const res = await t.api.post('/v1/emails', {
        ...base,
        scheduled_at: new Date(Date.now() + 3_600_000).toISOString(),
      });
      const later = new Date(Date.now() + 2 * 86_400_000);
      const offset = later.toISOString().replace('Z', '').slice(0, 19);
      const patched = await t.api.patch(`/v1/emails/${res.body.id}`, { scheduled_at: `${offset}+02:00` });
      expect(patched.status, patched.text).to.equal(200);
      expect(patched.body).to.deep.equal({
        id: res.body.id,
        status: 'scheduled',
        scheduled_at: new Date(Date.parse(`${offset}+02:00`)).toISOString(),
      });
      expect((await t.api.get(`/v1/emails/${res.body.id}`)).body.scheduled_at).to.equal(patched.body.scheduled_at);
      expectError(
        await t.api.patch(`/v1/emails/${res.body.id}`, {
          scheduled_at: new Date(Date.now() + 31 * 86_400_000).toISOString(),
        }),
        400,
        'validation_error',
        'scheduled_at',
      );
      expectError(
        await t.api.patch(`/v1/emails/${res.body.id}`, { scheduled_at: '2020-01-01T00:00:00Z' }),
        400,
        'validation_error',
        'scheduled_at',
      );
      expectError(
        await t.api.patch(`/v1/emails/${res.body.id}`, { scheduled_at: later.toISOString(), status: 'x' }),
        400,
        'validation_error',
        'status',
      );
      expectError(await t.api.patch(`/v1/emails/${res.body.id}`, {}), 400, 'validation_error', 'scheduled_at');
    });

    it('accepts and reschedules to 29 days ahead, and refuses a time just past 30 days (interface §8)', async function () {
      const day = 86_400_000;
      const at = new Date(Date.now() + 29 * day);
      const res = await t.api.post('/v1/emails', { ...base, scheduled_at: at.toISOString() });
      expect(res.status, res.text).to.equal(202);
      expect(res.body).to.include({ status: 'scheduled', scheduled_at: at.toISOString() });
      expect((await t.api.get(`/v1/emails/${res.body.id}`)).body).to.include({
        status: 'scheduled',
        scheduled_at: at.toISOString(),
      });
      // a minute past the edge: the server's clock runs after this one, so this is past 30 days there too
      const pastEdge = () => new Date(Date.now() + 30 * day + 60_000).toISOString();
      expectError(
        await t.api.post('/v1/emails', { ...base, scheduled_at: pastEdge() }),
        400,
        'validation_error',
        'scheduled_at',
      );

      const soon = await t.api.post('/v1/emails', {
        ...base,
        scheduled_at: new Date(Date.now() + 3_600_000).toISOString(),
      });
      const moved = new Date(Date.now() + 29 * day);
      const patched = await t.api.patch(`/v1/emails/${soon.body.id}`, { scheduled_at: moved.toISOString() });
      expect(patched.status, patched.text).to.equal(200);
      expect(patched.body).to.deep.equal({ id: soon.body.id, status: 'scheduled', scheduled_at: moved.toISOString() });
      expect((await t.api.get(`/v1/emails/${soon.body.id}`)).body.scheduled_at).to.equal(moved.toISOString());
      expectError(
        await t.api.patch(`/v1/emails/${soon.body.id}`, { scheduled_at: pastEdge() }),
        400,
        'validation_error',
        'scheduled_at',
      );
      // the refused PATCH left the time it had
      expect((await t.api.get(`/v1/emails/${soon.body.id}`)).body.scheduled_at).to.equal(moved.toISOString());
    });

    it('answers 409 not_schedulable once the email is sent', async function () {
      const res = await t.api.post('/v1/emails', base);
      await waitEmail(t.api, res.body.id, (x) => x.status === 'accepted');
      expectError(
        await t.api.patch(`/v1/emails/${res.body.id}`, {
          scheduled_at: new Date(Date.now() + 3_600_000).toISOString(),
        }),
        409,
        'not_schedulable',
      );
    });

    it("answers 404 for another project's email", async function () {
      const res = await t.api.post('/v1/emails', {
        ...base,
        scheduled_at: new Date(Date.now() + 3_600_000).toISOString(),
      });
      const other = await api.tenant();
      expectError(
        await other.api.patch(`/v1/emails/${res.body.id}`, {
          scheduled_at: new Date(Date.now() + 7_200_000).toISOString(),
        }),
        404,
        'not_found',
      );
      expectError(await other.api.get(`/v1/emails/${res.body.id}`), 404, 'not_found');
    });
  });
});
