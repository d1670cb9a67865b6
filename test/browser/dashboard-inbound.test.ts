import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import { newId } from '../../src/lib/ids.js';
import { freshSqlite, type TestDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { launchBrowser, signedIn } from '../helpers/browser.js';
import { smtpSend } from '../helpers/smtp-client.js';
import { arfReport, deliveryStatus } from '../fixtures/report-builders.js';

let seq = 0;
const crlf = (lines: string[]) => lines.join('\r\n');

/** A message with a text part, an HTML part (with a remote image that must not load) and one attachment. */
function richMessage(o: {
  to: string;
  subject: string;
  text: string;
  attachment: { filename: string; content: string };
}): string {
  const [mixed, alt] = [`mix-${++seq}`, `alt-${seq}`];
  return crlf([
    'From: Ann Example <ann@client.test>',
    `To: ${o.to}`,
    `Subject: ${o.subject}`,
    'Date: Tue, 03 Mar 2026 10:00:00 +0000',
    `Message-ID: <m${seq}.${Date.now()}@client.test>`,
    'Reply-To: orders@client.test',
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${mixed}"`,
    '',
    `--${mixed}`,
    `Content-Type: multipart/alternative; boundary="${alt}"`,
    '',
    `--${alt}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    o.text,
    `--${alt}`,
    'Content-Type: text/html; charset=utf-8',
    '',
    `<p>Hello <b>${o.subject}</b><img src="https://tracker.example/pixel.gif" alt=""></p>`,
    `--${alt}--`,
    `--${mixed}`,
    `Content-Type: text/plain; name*=UTF-8''${encodeURIComponent(o.attachment.filename)}`,
    `Content-Disposition: attachment; filename*=UTF-8''${encodeURIComponent(o.attachment.filename)}`,
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from(o.attachment.content).toString('base64'),
    `--${mixed}--`,
    '',
  ]);
}

// Received mail in the dashboard: the real appliance with its MX listener, mail sent to it over SMTP.
describe('the dashboard in a browser: inbound mail', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let api: TestApi;
  let browser: Browser;
  let port: number;
  before(async function () {
    db = freshSqlite();
    await db.store.migrateLatest();
    api = await startTestApi(
      db.store,
      { smtp: { inbound: { host: '127.0.0.1', port: 0 }, submission: { enabled: false } } },
      { roles: { inbound: true } },
    );
    port = api.running.inboundPort!;
    browser = await launchBrowser();
  });
  after(async function () {
    await browser?.close();
    await api?.stop();
    await db?.drop();
  });

  /** A tenant with a verified domain the MX listener takes mail for (verified by hand: no DNS here). */
  async function receiver(): Promise<{ t: Tenant; domain: string }> {
    const t = await api.tenant();
    const domain = `rx${Date.now().toString(36)}${++seq}.test`;
    const now = Date.now();
    await api.deps.store.knex('domains').insert({
      id: newId('domain'),
      project_id: t.project.id,
      name: domain,
      status: 'verified',
      dkim_token: `tok${now}${seq}`,
      active_selector: 'ph1',
      created_at: now,
      updated_at: now,
    });
    return { t, domain };
  }

  /** A message sent to the MX listener for `t`'s domain; the id it is stored under (250 comes after the commit). */
  async function receive(t: Tenant, from: string, to: string, raw: string): Promise<string> {
    const r = await smtpSend(port, { from, to: [to], raw });
    expect(r.ok, JSON.stringify(r)).to.equal(true);
    return (await api.core.services.inbound.list(t.project.id, 1, undefined)).items[0].id;
  }

  it('lists received mail and shows a message: its headers, text, HTML in a sandboxed frame, and an attachment that downloads', async function () {
    const { t, domain } = await receiver();
    const to = `support@${domain}`;
    await receive(
      t,
      'ann@client.test',
      to,
      richMessage({ to, subject: 'First question', text: 'One', attachment: { filename: 'a.txt', content: 'a' } }),
    );
    const id = await receive(
      t,
      'ann@client.test',
      to,
      richMessage({
        to,
        subject: 'Where is my order?',
        text: 'Order 42 has not arrived.',
        attachment: { filename: 'Lieferschein 報告.txt', content: 'attached words' },
      }),
    );

    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Inbound' }).click();
    await page.getByRole('heading', { name: 'Inbound', level: 1 }).waitFor();
    expect(await page.locator('tbody tr td:nth-child(3)').allTextContents()).to.deep.equal([
      'Where is my order?',
      'First question',
    ]);
    await page.getByRole('link', { name: 'Where is my order?' }).click();
    await page.waitForURL(`**/dashboard/inbound/${id}`);

    const facts = await page.locator('dl.facts').first().textContent();
    for (const s of ['ann@client.test', to, 'Tue, 03 Mar 2026 10:00:00 +0000']) expect(facts).to.include(s);
    expect(await page.locator('dl.details').textContent()).to.include('orders@client.test');
    expect(await page.locator('pre.text-part').textContent()).to.equal('Order 42 has not arrived.');
    expect(await page.getByRole('heading', { name: /Read as/ }).count()).to.equal(0);

    // the HTML: a sandboxed frame whose document runs nothing and fetches nothing
    expect(await page.locator('iframe.preview').getAttribute('sandbox')).to.equal('');
    expect(await page.frameLocator('iframe.preview').locator('b').textContent()).to.equal('Where is my order?');
    const frame = await context.request.get(`/dashboard/inbound/${id}/html`);
    expect(frame.headers()['content-security-policy']).to.match(/^sandbox; default-src 'none'.*img-src data:/);

    // the attachment downloads under its own name, with its bytes
    const link = page.getByRole('link', { name: 'Lieferschein 報告.txt' });
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).to.equal('Lieferschein 報告.txt');
    expect(await readFile(await download.path(), 'utf8')).to.equal('attached words');
    const file = await context.request.get(`/dashboard/inbound/${id}/attachments/0`);
    expect(file.headers()['content-disposition']).to.match(/^attachment; /);
    expect(file.headers()['content-type']).to.match(/^text\/plain/);
    await context.close();
  });

  it('reads a bounce and a complaint that arrived as received mail, with the email they are about', async function () {
    const { t, domain } = await receiver();
    const sent = await t.api.post('/v1/emails', {
      from: 'shop@example.com',
      to: ['gone@example.net'],
      subject: 'Your receipt',
      text: 'x',
    });
    expect(sent.status, sent.text).to.equal(202);
    const emailId = sent.body.id as string;
    const original = crlf([
      'From: shop@example.com',
      'To: gone@example.net',
      'Subject: Your receipt',
      `Message-ID: <${emailId.slice(4)}@${api.config.outbound.hostname}>`,
      '',
      'x',
    ]);
    const to = `bounces@${domain}`;
    const bounce = await receive(
      t,
      '',
      to,
      deliveryStatus({
        to,
        recipient: 'gone@example.net',
        status: '5.1.1',
        diagnostic: 'smtp; 550 5.1.1 <gone@example.net>: Recipient address rejected: User unknown',
        original,
      }),
    );

    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.goto(`/dashboard/inbound/${bounce}`);
    const reading = page.locator('section', { has: page.getByRole('heading', { name: /Read as/ }) });
    expect(await reading.getByRole('heading').first().textContent()).to.include('Bounce');
    expect(await reading.locator('td.bounce-type').textContent()).to.equal('Permanent');
    expect(await reading.locator('td.reason').textContent()).to.equal('user_unknown');
    expect(await reading.textContent()).to.include('mx.isp.test');
    await reading.getByRole('link', { name: emailId }).click();
    await page.waitForURL(`**/dashboard/emails/${emailId}`);
    await page.getByRole('heading', { name: 'Your receipt' }).waitFor();

    const complaint = await receive(t, 'fbl@isp.test', to, arfReport({ to, recipient: 'gone@example.net', original }));
    await page.goto(`/dashboard/inbound/${complaint}`);
    expect(await reading.getByRole('heading').first().textContent()).to.include('Complaint');
    expect(await reading.textContent()).to.include('abuse');
    expect(await reading.textContent()).to.include('SomeISP FBL/1.0');

    // a bounce about another project's email names no email of this one
    const other = await api.tenant();
    const theirs = (
      await other.api.post('/v1/emails', { from: 'x@example.com', to: ['y@example.net'], subject: 'Theirs', text: 'x' })
    ).body.id as string;
    const foreign = await receive(
      t,
      '',
      to,
      deliveryStatus({
        to,
        recipient: 'y@example.net',
        status: '5.1.1',
        diagnostic: 'smtp; 550 5.1.1 no such user',
        original: original.replace(emailId.slice(4), theirs.slice(4)),
      }),
    );
    await page.goto(`/dashboard/inbound/${foreign}`);
    expect(await reading.textContent()).to.include('not an email of this project');
    expect(await reading.getByRole('link').count()).to.equal(0);
    await context.close();
  });

  it('pages through received mail, 20 a page', async function () {
    const { t, domain } = await receiver();
    const to = `many@${domain}`;
    for (let i = 1; i <= 21; i++)
      await receive(
        t,
        'b@client.test',
        to,
        crlf([`From: b@client.test`, `To: ${to}`, `Subject: Message ${i}`, '', `body ${i}`, '']),
      );
    const { context, page } = await signedIn(browser, api.baseUrl, t.key);
    await page.goto('/dashboard/inbound');
    const subjects = () => page.locator('tbody tr td:nth-child(3)').allTextContents();
    expect(await subjects()).to.have.length(20);
    expect((await subjects())[0]).to.equal('Message 21');
    await page.getByRole('link', { name: 'Older mail →' }).click();
    await page.waitForURL((u) => u.searchParams.has('cursor'));
    expect(await subjects()).to.deep.equal(['Message 1']);
    await context.close();
  });

  it("never shows another project's received mail: its pages are 404s; a key without inbound:read sees a 403 page", async function () {
    const a = await receiver();
    const b = await receiver();
    const to = `secret@${b.domain}`;
    const theirs = await receive(
      b.t,
      'c@client.test',
      to,
      richMessage({ to, subject: 'Secret of B', text: 'secret', attachment: { filename: 'b.txt', content: 'b' } }),
    );
    const { context, page } = await signedIn(browser, api.baseUrl, a.t.key);
    await page.goto('/dashboard/inbound');
    expect(await page.locator('main').textContent()).to.not.include('Secret of B');
    const res = await page.goto(`/dashboard/inbound/${theirs}`);
    expect(res!.status()).to.equal(404);
    expect(await page.locator('main').textContent()).to.not.include('Secret of B');
    for (const part of ['html', 'raw', 'attachments/0'])
      expect((await context.request.get(`/dashboard/inbound/${theirs}/${part}`)).status()).to.equal(404);
    await context.close();

    const narrow = await a.t.newKey({ scopes: ['emails:read'] });
    const s = await signedIn(browser, api.baseUrl, narrow.key);
    const denied = await s.page.goto('/dashboard/inbound');
    expect(denied!.status()).to.equal(403);
    await s.page.getByRole('heading', { name: 'Not allowed' }).waitFor();
    expect(await s.page.getByRole('alert').textContent()).to.include('inbound:read');
    await s.context.close();
  });
});
