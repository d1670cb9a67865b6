import { expect } from 'chai';
import { simpleParser } from 'mailparser';
import type { TestApi, Tenant } from '../helpers/api.js';
import type { DnsWorld } from '../helpers/dns-world.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import { dkimResults, startLiveWorld, verifiedDomain, waitEmail, type LiveWorld } from '../helpers/live.js';
import { expectError } from '../helpers/assert.js';
import { findEmail } from '../../src/modules/sending/emails/emails.repo.js';
import { eventsOfEmail } from '../../src/modules/notifying/events/events.repo.js';

const SIM = 'simulator.posthorn.test';
let n = 0;
const uid = (p = 'tpl') => `${p}-${Date.now().toString(36)}-${++n}`;

const RECEIPT = {
  subject: 'Receipt {{ order }} for {{ name | there }}',
  html: '<h1>Thanks, {{ name | there }}</h1><table>{{#each items as item}}<tr><td>{{ item.title }}</td><td>{{ item.price | currency:\'USD\' }}</td></tr>{{/each}}</table><p><a href="{{ link }}">Your order</a></p>',
  variables: {
    order: {},
    name: { required: false },
    items: { type: 'array' },
    link: {},
    secret_note: { required: false },
  },
};
const VARS = {
  order: 'A-17',
  name: 'Ann & Bo',
  items: [
    { title: 'Mug <large>', price: 12.5 },
    { title: 'Tea', price: 3 },
  ],
  link: 'https://shop.test/o?id=17&x=1',
  secret_note: 'do-not-leak-8f3a',
};

describe('template sends (interface §4.1, §4.3)', function () {
  this.timeout(60_000);
  let live_: LiveWorld;
  let world: DnsWorld;
  let sink: SmtpSink;
  let api: TestApi;
  let live: Tenant;
  let test: Tenant;
  let domain: { id: string; domain: string };

  before(async function () {
    live_ = await startLiveWorld('dkim.appliance.test', 'mta.appliance.test', {
      outbound: { retry_schedule: ['1s', '1s'] },
    });
    ({ world, sink, api } = live_);
    live = await api.tenant({ mode: 'live' });
    domain = await verifiedDomain(live, world);
    test = await api.tenant({ mode: 'test' });
  });
  after(async function () {
    await live_.stop();
  });

  const stored = async (t: Tenant, id: string) => (await findEmail(api.deps.store.knex, t.project.id, id))!;

  it('delivers the rendered template DKIM-signed; the email keeps its content after the template is deleted', async function () {
    const id = uid('receipt');
    expect((await live.api.post('/v1/templates', { id, ...RECEIPT })).status).to.equal(201);
    const to = `ann-${Date.now()}@ok.test`;
    const res = await live.api.post('/v1/emails', {
      from: `Shop <orders@${domain.domain}>`,
      to: [to],
      template_id: id,
      variables: VARS,
    });
    expect(res.status, res.text).to.equal(202);
    expect(res.body).to.include({ template_id: id, template_version: 1, subject: 'Receipt A-17 for Ann & Bo' });

    const msg = await sink.waitForMessage(to);
    expect(await dkimResults(world, msg.raw)).to.deep.equal([`${domain.domain}:pass`]);
    const parsed = await simpleParser(msg.raw);
    expect(parsed.subject).to.equal('Receipt A-17 for Ann & Bo');
    expect(parsed.html).to.include('<h1>Thanks, Ann &amp; Bo</h1>');
    expect(parsed.html).to.include('<td>Mug &lt;large&gt;</td><td>$12.50</td>');
    expect(parsed.html).to.include('href="https://shop.test/o?id=17&amp;x=1"');
    // the text part generated from the html: rows readable, the link as text [url]
    expect(parsed.text).to.include('Thanks, Ann & Bo');
    expect(parsed.text).to.match(/Mug <large>\s+\$12\.50/);
    expect(parsed.text).to.include('Your order [https://shop.test/o?id=17&x=1]');

    const before = await waitEmail(live.api, res.body.id, (e) => e.status === 'accepted');
    expect((await live.api.delete(`/v1/templates/${id}`)).status).to.equal(200);
    const after = (await live.api.get(`/v1/emails/${res.body.id}`)).body;
    expect(after).to.deep.equal(before);
    const kept = await stored(live, res.body.id);
    expect(kept.html).to.equal(parsed.html);
    expect(kept).to.include({ templateId: id, templateVersion: 1, subject: 'Receipt A-17 for Ann & Bo' });

    // events carry no variables
    const events = await eventsOfEmail(api.deps.store.knex, res.body.id);
    expect(events.length).to.be.greaterThan(0);
    expect(JSON.stringify(events)).to.not.include('do-not-leak-8f3a').and.not.include('"variables"');
  });

  it('renders test sends exactly as live sends', async function () {
    const id = uid('receipt');
    await live.api.post('/v1/templates', { id, ...RECEIPT });
    await test.api.post('/v1/templates', { id, ...RECEIPT });
    const l = await live.api.post('/v1/emails', {
      from: `orders@${domain.domain}`,
      to: [`x-${Date.now()}@ok.test`],
      template_id: id,
      variables: VARS,
    });
    const t = await test.api.post('/v1/emails', {
      from: 'orders@example.test',
      to: [`delivered@${SIM}`],
      template_id: id,
      variables: VARS,
    });
    expect(t.status, t.text).to.equal(202);
    const [a, b] = [await stored(live, l.body.id), await stored(test, t.body.id)];
    expect(b).to.include({ subject: a.subject, html: a.html, text: a.text, templateId: id, templateVersion: 1 });
  });

  it('refuses what a template send cannot be, naming the field', async function () {
    const id = uid();
    await test.api.post('/v1/templates', {
      id,
      subject: 'Hi {{ name }}',
      text: '{{ plan }}',
      variables: { name: {}, plan: { required: false } },
    });
    const send = (extra: Record<string, unknown>) =>
      test.api.post('/v1/emails', { from: 'a@example.test', to: [`delivered@${SIM}`], ...extra });
    expect(expectError(await send({ template_id: id, variables: {} }), 400, 'invalid_variables').field).to.equal(
      'variables.name',
    );
    expect(expectError(await send({ template_id: id }), 400, 'invalid_variables').field).to.equal('variables.name');
    expect(
      expectError(await send({ template_id: id, variables: { name: 5 } }), 400, 'invalid_variables').field,
    ).to.equal('variables.name');
    expectError(
      await send({ template_id: id, variables: { name: 'x' }, subject: 'also' }),
      400,
      'validation_error',
      'template_id',
    );
    expectError(await send({ template_id: uid(), variables: {} }), 400, 'validation_error', 'template_id');
    expectError(
      await send({ template_id: id, template_version: 2, variables: { name: 'x' } }),
      400,
      'validation_error',
      'template_version',
    );
    expectError(
      await send({ subject: 's', text: 't', variables: { name: 'x' } }),
      400,
      'validation_error',
      'variables',
    );
    expectError(
      await send({ template_id: id, variables: { name: 'x' }, language: 'english' }),
      400,
      'validation_error',
      'language',
    );
    // a line break a variable brings into the subject cannot add a header
    const ok = await send({ template_id: id, variables: { name: 'Ann\r\nBcc: evil@x.test', extra: 'ignored' } });
    expect(ok.status, ok.text).to.equal(202);
    expect(ok.body.subject).to.equal('Hi Ann Bcc: evil@x.test');
  });

  it('a template deleted since it was last sent is no template for the next send, whatever was cached', async function () {
    const id = uid();
    await test.api.post('/v1/templates', { id, subject: 'Hi', text: 'x' });
    const send = () =>
      test.api.post('/v1/emails', { from: 'a@example.test', to: [`delivered@${SIM}`], template_id: id });
    expect((await send()).status).to.equal(202);
    await test.api.delete(`/v1/templates/${id}`);
    expectError(await send(), 400, 'validation_error', 'template_id');
  });

  it('a send naming a version gets it; a new version serves the next send at once', async function () {
    const id = uid();
    await test.api.post('/v1/templates', { id, subject: 'v1', text: 'one' });
    const send = (extra: Record<string, unknown> = {}) =>
      test.api.post('/v1/emails', { from: 'a@example.test', to: [`delivered@${SIM}`], template_id: id, ...extra });
    expect((await send()).body).to.include({ subject: 'v1', template_version: 1 });
    await test.api.post('/v1/templates', { id, subject: 'v2', text: 'two' });
    expect((await send()).body).to.include({ subject: 'v2', template_version: 2 });
    expect((await send({ template_version: 1 })).body).to.include({ subject: 'v1', template_version: 1 });
  });

  it('a split gives each recipient one version, and 1,000 recipients land within 5 points of 70/30', async function () {
    const id = uid();
    await test.api.post('/v1/templates', { id, subject: 'A', text: 'a' });
    await test.api.post('/v1/templates', { id, subject: 'B', text: 'b' });
    expect(
      (
        await test.api.patch(`/v1/templates/${id}`, {
          split: [
            { version: 1, percent: 70 },
            { version: 2, percent: 30 },
          ],
        })
      ).status,
    ).to.equal(200);
    const send = (to: string, extra: Record<string, unknown> = {}) =>
      test.api.post('/v1/emails', { from: 'a@example.test', to: [to], template_id: id, ...extra });

    const one = `sticky-${Date.now()}@example.test`;
    const versions = new Set<number>();
    for (let i = 0; i < 20; i++) versions.add((await send(one)).body.template_version);
    expect(versions.size, 'one recipient, one version').to.equal(1);
    expect(
      (await send(one, { template_version: 2 })).body.template_version,
      'a named version wins over the split',
    ).to.equal(2);

    const counts = { 1: 0, 2: 0 } as Record<number, number>;
    for (let batch = 0; batch < 1000; batch += 50) {
      const replies = await Promise.all(
        Array.from({ length: 50 }, (_, i) => send(`user${batch + i}@example${(batch + i) % 7}.test`)),
      );
      for (const r of replies) {
        expect(r.status, r.text).to.equal(202);
        counts[r.body.template_version]++;
        expect(r.body.subject).to.equal(r.body.template_version === 1 ? 'A' : 'B');
      }
    }
    expect(counts[1] / 10).to.be.within(65, 75);
    expect(counts[2] / 10).to.be.within(25, 35);
  });
});
