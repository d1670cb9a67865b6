import { expect } from 'chai';
import type { Tenant } from '../helpers/api.js';
import { dashboardWorld, signedIn, tabTo } from '../helpers/browser.js';

describe('the dashboard in a browser: audiences, topics, segments with their live count, signup forms', function () {
  this.timeout(90_000);
  const w = dashboardWorld();

  /** A project with a plan property and three contacts, two of them on the pro plan. */
  async function tenantWithContacts(): Promise<Tenant> {
    const t = await w.api.tenant();
    await t.api.post('/v1/contact-properties', { key: 'plan', type: 'string', fallback: 'free' });
    for (const [email, plan] of [
      ['ann@seg.example', 'pro'],
      ['bob@seg.example', 'pro'],
      ['cy@seg.example', 'free'],
    ])
      await t.api.post('/v1/contacts', { email, properties: { plan } });
    return t;
  }

  it('makes an audience with the keyboard alone, adds a contact to it, removes it, and deletes the audience', async function () {
    const t = await w.api.tenant();
    await t.api.post('/v1/contacts', { email: 'kept@aud.example' });
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);
    await page.goto('/dashboard/audiences');
    await tabTo(page, '#aud-name');
    await page.keyboard.type('VIP customers');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Audience made' }).waitFor();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal('VIP customers');

    await page.getByLabel('Address to add').fill('kept@aud.example');
    await page.getByRole('button', { name: 'Add to audience' }).click();
    await page.getByRole('status').filter({ hasText: 'kept@aud.example is in the audience' }).waitFor();
    expect(await page.locator('table.contacts tbody tr').count()).to.equal(1);
    await page.getByRole('button', { name: 'Remove kept@aud.example from the audience' }).click();
    await page.getByRole('status').filter({ hasText: 'is out of the audience' }).waitFor();
    expect(await page.locator('table.contacts').count()).to.equal(0);
    expect((await t.api.get('/v1/contacts/kept@aud.example')).status).to.equal(200);

    await page.getByRole('link', { name: 'Delete audience…' }).click();
    await page.getByRole('button', { name: 'Delete audience' }).click();
    await page.getByRole('status').filter({ hasText: 'is deleted' }).waitFor();
    expect((await t.api.get('/v1/audiences')).body.data).to.have.length(0);
    await context.close();
  });

  it("shows the API's refusal of an address beside the field", async function () {
    const t = await w.api.tenant();
    const aud = (await t.api.post('/v1/audiences', { name: 'Some' })).body as { id: string };
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);
    await page.goto(`/dashboard/audiences/${aud.id}`);
    // the browser would stop a malformed address itself: the API's own check is what is shown
    await page.locator('#member-email').evaluate((el) => el.setAttribute('type', 'text'));
    await page.getByLabel('Address to add').fill('nobody at all');
    await page.getByRole('button', { name: 'Add to audience' }).click();
    expect(await page.getByLabel('Address to add').getAttribute('aria-invalid')).to.equal('true');
    expect(await page.locator('#member-emails-error').textContent()).to.match(/\S/);
    await context.close();
  });

  it('makes a topic with the keyboard alone, renames it, and deletes it', async function () {
    const t = await w.api.tenant();
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);
    await page.goto('/dashboard/topics');
    await tabTo(page, '#top-name');
    await page.keyboard.type('Offers');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Sales and coupons');
    await tabTo(page, '#top-default-subscribed');
    await page.keyboard.press('ArrowDown');
    await tabTo(page, 'section button[type="submit"]');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Topic made' }).waitFor();
    const made = (await t.api.get('/v1/topics')).body.data[0];
    expect(made).to.include({ name: 'Offers', description: 'Sales and coupons', default_subscription: 'unsubscribed' });

    await page.locator('#set-name').fill('Special offers');
    await page.getByRole('button', { name: 'Save topic' }).click();
    await page.getByRole('status').filter({ hasText: 'Topic saved' }).waitFor();
    expect((await t.api.get(`/v1/topics/${made.id}`)).body.name).to.equal('Special offers');
    await page.getByRole('link', { name: 'Delete topic…' }).click();
    await page.getByRole('button', { name: 'Delete topic' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Topic ${made.id} is deleted` })
      .waitFor();
    expect((await t.api.get(`/v1/topics/${made.id}`)).status).to.equal(404);
    await context.close();
  });

  it('counts the contacts a filter matches as it is typed, then saves the segment with the keyboard alone', async function () {
    const t = await tenantWithContacts();
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);
    await page.goto('/dashboard/segments');
    await tabTo(page, '#seg-name');
    await page.keyboard.type('Pro customers');
    await tabTo(page, '#seg-filter');
    await page.keyboard.type("plan == 'pro'");
    const count = page.locator('#segment-count');
    await count.getByText('2 contacts match now').waitFor();
    await page.keyboard.type(' or plan == ');
    await count.getByRole('alert').waitFor();
    expect(await count.textContent()).to.include('filter line 1');
    await page.keyboard.type("'free'");
    await count.getByText('3 contacts match now').waitFor();
    await page.keyboard.press('Backspace');
    await page.keyboard.type("x'");
    // 'freex' is nobody's plan: the pro ones again
    await count.getByText('2 contacts match now').waitFor();
    await tabTo(page, '#seg-name');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Pro customers' }).waitFor();
    // the segment's page lists who matches now
    const seg = (await t.api.get('/v1/segments')).body.data[0];
    expect(seg.filter).to.equal("plan == 'pro' or plan == 'freex'");
    expect(await page.locator('table.contacts tbody tr').count()).to.equal(2);

    await page.getByRole('link', { name: 'Delete segment…' }).click();
    await page.getByRole('button', { name: 'Delete segment' }).click();
    await page.getByRole('status').filter({ hasText: 'is deleted' }).waitFor();
    expect((await t.api.get('/v1/segments')).body.data).to.have.length(0);
    await context.close();
  });

  it('counts with the Count button when the script does not run, and shows a refused filter beside it', async function () {
    const t = await tenantWithContacts();
    const { context: js, page: first } = await signedIn(w.browser, w.api.baseUrl, t.key);
    const state = await js.storageState();
    await first.close();
    const context = await w.browser.newContext({
      baseURL: w.api.baseUrl,
      storageState: state,
      javaScriptEnabled: false,
    });
    const page = await context.newPage();
    await page.goto('/dashboard/segments');
    await page.getByLabel('Segment name').fill('Free');
    await page.locator('#seg-filter').fill("plan == 'free'");
    await page.getByRole('button', { name: 'Count matching contacts' }).click();
    expect(await page.locator('#segment-count').textContent()).to.include('1 contact matches now');
    expect(await page.locator('#seg-filter').inputValue()).to.equal("plan == 'free'");
    await page.locator('#seg-filter').fill('colour == 1');
    await page.getByRole('button', { name: 'Save segment' }).click();
    expect(await page.locator('#seg-filter').getAttribute('aria-invalid')).to.equal('true');
    expect(await page.locator('#seg-filter-error').textContent()).to.include("variable 'colour' is not declared");
    await context.close();
    await js.close();
  });

  it('makes a signup form with the keyboard alone; its page has the embed snippet, which copies and signs people up', async function () {
    const t = await w.api.tenant();
    await t.api.post('/v1/audiences', { name: 'Newsletter' });
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.goto('/dashboard/forms');
    await tabTo(page, '#add-name');
    await page.keyboard.type('Join the newsletter');
    await tabTo(page, '#add-audience_id');
    await page.keyboard.press('ArrowDown');
    await tabTo(page, '#add-field-last_name');
    await page.keyboard.press('Space');
    await tabTo(page, '#add-double_opt_in');
    await page.keyboard.press('Space');
    await tabTo(page, '#add-name');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Form made' }).waitFor();
    const made = (await t.api.get('/v1/forms')).body.data[0];
    expect(made).to.include({ name: 'Join the newsletter', double_opt_in: false });
    expect(made.fields).to.deep.equal(['email', 'first_name', 'last_name']);

    const snippet = await page.getByLabel('Embed snippet').inputValue();
    expect(snippet).to.include(`action="${made.url}"`);
    expect(snippet).to.include('name="first_name"').and.include('name="last_name"').and.include('name="your-website"');
    await page.getByRole('button', { name: 'Copy snippet' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(
      await page.evaluate(() =>
        (
          globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
        ).navigator.clipboard.readText(),
      ),
    ).to.equal(snippet);
    // what the snippet posts signs a person up (at the test server's address: its public_url is a placeholder)
    const posted = await page.request.post(`${w.api.baseUrl}/f/${made.id}`, {
      form: { email: 'new@signup.example', first_name: 'Nia', last_name: 'Ode', 'your-website': '' },
    });
    expect(posted.status()).to.be.below(400);
    const c = (await t.api.get('/v1/contacts/new@signup.example')).body;
    expect(c).to.include({ first_name: 'Nia' });
    expect(c.audiences).to.deep.equal([made.audience_id]);
    await context.close();
  });

  it("changes a form's settings, shows a refusal beside its field, and deletes the form", async function () {
    const t = await w.api.tenant();
    const aud = (await t.api.post('/v1/audiences', { name: 'List' })).body as { id: string };
    const f = (await t.api.post('/v1/forms', { name: 'Old name', audience_id: aud.id, double_opt_in: false })).body;
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);
    await page.goto(`/dashboard/forms/${f.id}`);
    await page.getByText('Change settings').click();
    await page.locator('#set-name').fill('New name');
    await page.locator('#set-redirect_url').fill('ftp://example.com/thanks');
    await page.getByRole('button', { name: 'Save form' }).click();
    expect(await page.locator('#set-redirect_url').getAttribute('aria-invalid')).to.equal('true');
    expect(await page.locator('#set-redirect_url-error').textContent()).to.match(/\S/);
    await page.locator('#set-redirect_url').fill('');
    await page.getByRole('button', { name: 'Save form' }).click();
    await page.getByRole('status').filter({ hasText: 'Form saved' }).waitFor();
    expect((await t.api.get(`/v1/forms/${f.id}`)).body.name).to.equal('New name');
    await page.getByRole('link', { name: 'Delete form…' }).click();
    await page.getByRole('button', { name: 'Delete form' }).click();
    await page.getByRole('status').filter({ hasText: 'is deleted' }).waitFor();
    expect((await t.api.get(`/v1/forms/${f.id}`)).status).to.equal(404);
    await context.close();
  });
});
