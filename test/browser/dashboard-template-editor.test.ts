import { expect } from 'chai';
import type { Page } from 'playwright-core';
import type { Tenant } from '../helpers/api.js';
import { dashboardWorld, signedIn, tabTo } from '../helpers/browser.js';

// Writing templates in the dashboard: a template from HTML typed with the keyboard only, the
// visual design editor (blocks added, moved, edited, removed; colours; conditions) with its live
// preview, Publish and its refusals beside their fields; split traffic, a test send and delete.
describe('the dashboard in a browser: writing templates and designs', function () {
  this.timeout(90_000);
  const w = dashboardWorld();

  const open = async (t: Tenant, path: string): Promise<{ page: Page; close: () => Promise<void> }> => {
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);
    await page.goto(path);
    return { page, close: () => context.close() };
  };

  it('publishes a template from HTML with the keyboard only: fields, a variable, Publish', async function () {
    const t = await w.api.tenant();
    const { page, close } = await open(t, '/dashboard/templates');
    await tabTo(page, 'a[href$="/templates/+new"]');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'New template', level: 1 }).waitFor();
    await tabTo(page, '#f-id');
    await page.keyboard.type('order-shipped');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Order shipped');
    await tabTo(page, '#f-subject');
    await page.keyboard.type('Your order {{ order }} is on its way');
    await tabTo(page, '#f-html');
    await page.keyboard.type('<p>Order <b>{{ order }}</b> left our warehouse.</p>');
    await tabTo(page, '#f-var0-name');
    await page.keyboard.type('order');
    await tabTo(page, 'button[value="publish"]');
    await page.keyboard.press('Enter');
    await page.waitForURL('**/dashboard/templates/order-shipped?published=1');
    await page.getByText('Version 1 is published.').waitFor();
    const v = (await t.api.get('/v1/templates/order-shipped/versions/1')).body;
    expect(v).to.include({ subject: 'Your order {{ order }} is on its way' });
    expect(v.html).to.equal('<p>Order <b>{{ order }}</b> left our warehouse.</p>');
    expect(v.variables).to.deep.equal({ order: { type: 'string', required: true } });
    expect((await t.api.get('/v1/templates/order-shipped')).body.name).to.equal('Order shipped');
    await close();
  });

  it('publishes a translation beside the main version, and shows a bad language tag beside its field', async function () {
    const t = await w.api.tenant();
    const { page, close } = await open(t, '/dashboard/templates/+new');
    await page.locator('#f-id').fill('greeting');
    await page.locator('#f-subject').fill('Hello {{ name }}');
    await page.locator('#f-html').fill('<p>Hello {{ name }}</p>');
    await page.locator('#f-var0-name').fill('name');
    await page.locator('#f-tr0-lang').fill('not a tag!');
    await page.locator('#f-tr0-subject').fill('Hallo {{ name }}');
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.locator('#f-tr0-lang[aria-invalid="true"]').waitFor();
    // what was typed is kept
    expect(await page.locator('#f-tr0-subject').inputValue()).to.equal('Hallo {{ name }}');
    expect((await t.api.get('/v1/templates/greeting')).status).to.equal(404);
    await page.locator('#f-tr0-lang').fill('de');
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.waitForURL('**/dashboard/templates/greeting?published=1');
    const v = (await t.api.get('/v1/templates/greeting/versions/1')).body;
    expect(v.translations).to.deep.equal({ de: { subject: 'Hallo {{ name }}' } });
    const de = await t.api.post('/v1/templates/greeting/render', { variables: { name: 'Ada' }, language: 'de' });
    expect(de.body.subject).to.equal('Hallo Ada');
    await close();
  });

  it('makes a design with the keyboard alone: the heading typed, a block chosen, added and filled, Publish', async function () {
    const t = await w.api.tenant();
    const { page, close } = await open(t, '/dashboard/templates');
    await tabTo(page, 'a[href$="/templates/+design"]');
    await page.keyboard.press('Enter');
    await waitForFrame(page, 'A heading');
    await tabTo(page, '#f-id');
    await page.keyboard.type('launch-note');
    await tabTo(page, '#f-subject');
    await page.keyboard.type('We launched');
    await tabTo(page, '#f-b0-text');
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('It is out');
    // a select takes the first letters of its choice typed while it has the focus
    await tabTo(page, '#f-add_type');
    await page.keyboard.type('discount');
    await tabTo(page, 'button[value="add"]');
    await page.keyboard.press('Enter');
    await page.getByRole('group', { name: 'Block 4: discount' }).waitFor();
    await tabTo(page, '#f-b3-code');
    await page.keyboard.type('LAUNCH10');
    await tabTo(page, 'button[value="publish"]');
    await page.keyboard.press('Enter');
    await page.waitForURL('**/dashboard/templates/launch-note?published=1');
    const v = (await t.api.get('/v1/templates/launch-note/versions/1')).body;
    expect(v.subject).to.equal('We launched');
    expect(v.design.blocks.map((b: { type: string }) => b.type)).to.deep.equal([
      'heading',
      'text',
      'button',
      'discount',
    ]);
    expect(v.design.blocks[0].text).to.equal('It is out');
    expect(v.design.blocks[3].code).to.equal('LAUNCH10');
    await close();
  });

  it('edits a design: blocks added, moved, changed and removed, a colour and a condition; the preview follows; Publish saves it', async function () {
    const t = await w.api.tenant();
    const { page, close } = await open(t, '/dashboard/templates/+design');
    // a new design starts with a heading, a text and a button, previewed at once
    await waitForFrame(page, 'A heading');
    await page.getByLabel('Id (required)').fill('spring-sale');
    await page.getByLabel('Subject (required)', { exact: true }).fill('Spring sale, {{ name }}');
    await page.locator('#f-b0-text').fill('Hello {{ name }}, spring is here');
    await page.locator('#f-var0-name').fill('name');
    await page.locator('#f-var1-name').fill('vip');
    await page.locator('#f-var1-type').selectOption('boolean');
    await page.locator('#f-sample').fill('{"name": "Ann", "vip": false}');
    await waitForFrame(page, 'Hello Ann, spring is here');
    await page.getByLabel('Accent colour').fill('#aa3300');
    // add a discount block, then move it above the button
    await page.getByLabel('Block to add').selectOption('discount');
    await page.getByRole('button', { name: 'Add block' }).click();
    await page.getByRole('group', { name: 'Block 4: discount' }).waitFor();
    await page.locator('#f-b3-code').fill('SPRING20');
    await page.locator('#f-b3-when').fill('vip == true');
    await page.getByRole('button', { name: 'Move up block 4' }).click();
    await page.getByRole('group', { name: 'Block 3: discount' }).waitFor();
    // remove the text block
    await page.getByRole('button', { name: 'Remove block 2' }).click();
    expect(await page.locator('fieldset.block legend').allTextContents()).to.deep.equal([
      'Block 1: heading',
      'Block 2: discount',
      'Block 3: button',
    ]);
    // the condition holds for a VIP only
    await page.locator('#f-sample').fill('{"name": "Ann", "vip": true}');
    await waitForFrame(page, 'SPRING20');
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.waitForURL('**/dashboard/templates/spring-sale?published=1');
    const v = (await t.api.get('/v1/templates/spring-sale/versions/1')).body;
    expect(v.design.accent).to.equal('#aa3300');
    expect(v.design.blocks.map((b: { type: string }) => b.type)).to.deep.equal(['heading', 'discount', 'button']);
    expect(v.design.blocks[0].text).to.equal('Hello {{ name }}, spring is here');
    expect(v.design.blocks[1]).to.include({ code: 'SPRING20', when: 'vip == true' });
    expect(v.variables.vip).to.deep.equal({ type: 'boolean', required: true });
    // its page lists the blocks; a new version starts from them
    await page.getByRole('link', { name: 'Publish a new version' }).click();
    expect(await page.locator('#f-b1-code').inputValue()).to.equal('SPRING20');
    await close();
  });

  it('shows a refusal beside its field and keeps what was typed: a block without its URL, an id that is taken', async function () {
    const t = await w.api.tenant();
    await t.api.post('/v1/templates', { id: 'taken', subject: 's', text: 't' });
    const { page, close } = await open(t, '/dashboard/templates/+design');
    await page.getByLabel('Id (required)').fill('taken');
    await page.getByLabel('Subject (required)', { exact: true }).fill('Hi');
    await page.getByRole('button', { name: 'Publish' }).click();
    const id = page.locator('#f-id');
    expect(await id.getAttribute('aria-invalid')).to.equal('true');
    expect(await page.locator('#f-id-error').innerText()).to.match(/exists already/);
    await id.fill('fresh');
    await page.locator('#f-b2-url').fill('');
    await page.getByRole('button', { name: 'Publish' }).click();
    const url = page.locator('#f-b2-url');
    expect(await url.getAttribute('aria-invalid')).to.equal('true');
    expect(await page.locator('#f-b2-url-error').innerText()).to.match(/design\.blocks\[2\]\.url/);
    expect(await page.locator('#f-id').inputValue()).to.equal('fresh');
    expect((await t.api.get('/v1/templates/fresh')).status).to.equal(404);
    await close();
  });

  it('splits sends between versions, refuses percents that do not add up, turns the split off', async function () {
    const t = await w.api.tenant();
    for (const s of ['a', 'b']) await t.api.post('/v1/templates', { id: 'ab', subject: s, text: s });
    const { page, close } = await open(t, '/dashboard/templates/ab');
    await page.getByLabel('Version of share 1').selectOption('1');
    await page.getByLabel('Percent of share 1').fill('50');
    await page.getByLabel('Version of share 2').selectOption('2');
    await page.getByLabel('Percent of share 2').fill('40');
    await page.getByRole('button', { name: 'Save split' }).click();
    expect(await page.locator('#split-error').innerText()).to.match(/100/);
    expect(await page.getByLabel('Percent of share 2').inputValue()).to.equal('40');
    await page.getByLabel('Percent of share 2').fill('50');
    await page.getByRole('button', { name: 'Save split' }).click();
    await page.getByText('Split saved').waitFor();
    expect((await t.api.get('/v1/templates/ab')).body.split).to.deep.equal([
      { version: 1, percent: 50 },
      { version: 2, percent: 50 },
    ]);
    await page.getByRole('button', { name: 'Turn the split off' }).click();
    await page.getByText('Split turned off').waitFor();
    expect((await t.api.get('/v1/templates/ab')).body.split).to.equal(null);
    await close();
  });

  it('sends a test email from the template, refusing a bad address beside its field; deletes after a confirmation', async function () {
    const t = await w.api.tenant();
    await t.api.post('/v1/templates', {
      id: 'hello',
      subject: 'Hello {{ name }}',
      text: 'Hi {{ name }}',
      variables: { name: {} },
    });
    const { page, close } = await open(t, '/dashboard/templates/hello');
    await page.getByLabel('From address').fill('shop@example.com');
    await page.getByLabel('To address').fill('not an address');
    await page.getByRole('button', { name: 'Send test email' }).click();
    expect(await page.locator('#f-to').getAttribute('aria-invalid')).to.equal('true');
    expect(await page.getByLabel('Variables').inputValue()).to.include('"name"');
    await page.getByLabel('To address').fill('delivered@simulator.posthorn.test');
    await page.getByLabel('Variables').fill('{"name": "Ann"}');
    await page.getByRole('button', { name: 'Send test email' }).click();
    await page.waitForURL(/\/dashboard\/emails\/msg_/);
    await page.getByText('Hello Ann').first().waitFor();
    const sent = (await t.api.get('/v1/emails')).body.data as Array<{ subject: string; tags: Record<string, string> }>;
    expect(sent.map((e) => e.subject)).to.deep.equal(['Hello Ann']);
    await page.goto('/dashboard/templates/hello');
    await page.getByRole('link', { name: 'Delete template' }).click();
    await page.getByText('sends that name hello are refused from then on').waitFor();
    await page.getByRole('button', { name: 'Delete template' }).click();
    await page.getByText('Template deleted.').waitFor();
    expect((await t.api.get('/v1/templates/hello')).status).to.equal(404);
    await close();
  });

  it('works without script: Preview posts the draft into the frame, Add block comes back with the block', async function () {
    const t = await w.api.tenant();
    const context = await w.browser.newContext({ baseURL: w.api.baseUrl, javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto('/dashboard/sign-in');
    await page.getByLabel('API key').fill(t.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/dashboard/emails');
    await page.goto('/dashboard/templates/+design');
    await page.locator('#f-b0-text').fill('Plain forms work');
    await page.getByRole('button', { name: 'Preview' }).click();
    await waitForFrame(page, 'Plain forms work');
    await page.getByLabel('Block to add').selectOption('quote');
    await page.getByRole('button', { name: 'Add block' }).click();
    await page.getByRole('group', { name: 'Block 4: quote' }).waitFor();
    expect(await page.locator('#f-b0-text').inputValue()).to.equal('Plain forms work');
    await context.close();
  });

  it("never opens another project's template in the editor, nor deletes it", async function () {
    const owner = await w.api.tenant();
    const other = await w.api.tenant();
    await owner.api.post('/v1/templates', { id: 'mine', subject: 's', text: 't' });
    const { page, close } = await open(other, '/dashboard/templates/mine/edit');
    expect(await page.getByRole('heading', { level: 1 }).innerText()).to.equal('Not found');
    expect((await page.goto('/dashboard/templates/mine/delete'))!.status()).to.equal(404);
    expect((await owner.api.get('/v1/templates/mine')).status).to.equal(200);
    await close();
  });
});

/** Waits until the preview frame shows `text` (the script previews at load and when typing pauses). */
async function waitForFrame(page: Page, text: string): Promise<void> {
  const frame = page.frameLocator('iframe[name="template-frame"]');
  await frame.getByText(text).first().waitFor({ timeout: 15_000 });
}
