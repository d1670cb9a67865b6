import { expect } from 'chai';
import { newId } from '../../src/lib/ids.js';
import { setProject } from '../../src/modules/account/projects/projects.service.js';
import { dashboardWorld, signedIn } from '../helpers/browser.js';
import { client } from '../helpers/http.js';

// The project's suppressions, API keys and usage in headless Chromium against the real appliance.
describe('the dashboard in a browser: suppressions, API keys and usage', function () {
  this.timeout(60_000);
  const w = dashboardWorld();

  it('creates a key: its secret is shown once, works against the API with the scopes chosen, and is never on the list', async function () {
    const t = await w.api.tenant();
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();

    // no scope chosen: refused on the form itself
    await page.getByLabel('Name').fill('reporting');
    await page.getByRole('button', { name: 'Create key' }).click();
    expect(await page.getByRole('alert').textContent()).to.include('at least one scope');
    expect(await page.getByLabel('Name').inputValue()).to.equal('reporting');

    await page.getByLabel('emails:read').check();
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Create key' }).click(),
    ]);
    expect(answer.headers()['cache-control']).to.equal('no-store');
    await page.getByRole('heading', { name: 'Key created: reporting' }).waitFor();
    expect(await page.getByRole('alert').textContent()).to.include('cannot be shown again');
    const secret = await page.getByLabel(/The new test API key/).inputValue();
    expect(secret).to.match(/^ph_test_[0-9A-Za-z]{40}$/);
    expect(await page.getByRole('button', { name: 'Copy' }).getAttribute('data-copy')).to.equal(secret);

    const made = client(w.api.baseUrl, secret);
    expect((await made.get('/v1/emails')).status).to.equal(200);
    expect((await made.get('/v1/suppressions')).status).to.equal(403);
    const listed = (await t.api.get('/v1/api-keys')).body.data.find((k: { name: string }) => k.name === 'reporting');
    expect(listed).to.include({ mode: 'test' });
    expect(listed.scopes).to.deep.equal(['emails:read']);

    // the list, now and later, never carries the secret
    await page.goto('/dashboard/api-keys');
    const row = page.locator('tbody tr', { hasText: 'reporting' });
    expect(await row.textContent()).to.include('emails:read');
    expect(await page.content()).to.not.include(secret);
    expect(await page.getByLabel(/The new test API key/).count()).to.equal(0);
    await context.close();
  });

  it("revokes a key, which the API then refuses; revoking the session's own key signs out", async function () {
    const t = await w.api.tenant();
    const other = await t.newKey({ scopes: ['emails:read'] });
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);
    await page.goto('/dashboard/api-keys');
    await page.getByRole('button', { name: `Revoke key ${other.id}` }).click();
    await page.waitForURL((u) => u.searchParams.get('revoked') === other.id);
    expect(await page.getByRole('status').textContent()).to.include(`${other.id} is revoked`);
    expect(await page.locator('tbody tr', { hasText: other.id }).textContent()).to.include('revoked');
    expect((await other.api.get('/v1/emails')).status).to.equal(401);
    expect((await t.api.get('/v1/emails')).status).to.equal(200);

    await page.getByRole('button', { name: `Revoke and sign out key ${t.keyId}` }).click();
    await page.waitForURL('**/dashboard/sign-in**');
    expect((await t.api.get('/v1/emails')).status).to.equal(401);
    await page.goto('/dashboard/api-keys');
    expect(new URL(page.url()).pathname).to.equal('/dashboard/sign-in');
    await context.close();
  });

  it('adds and removes a suppression, and the API agrees', async function () {
    const t = await w.api.tenant();
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);
    await page.goto('/dashboard/suppressions');
    await page.getByText('No suppressed addresses yet.').waitFor();
    await page.getByLabel('Address to suppress').fill('Ann <Ann@Example.NET>');
    await page.getByRole('button', { name: 'Suppress address' }).click();
    await page.waitForURL((u) => u.searchParams.get('added') === 'ann@example.net');
    expect(await page.getByRole('status').textContent()).to.include('ann@example.net is suppressed');
    expect(await page.locator('tbody tr').allTextContents()).to.have.length(1);
    const listed = await t.api.get('/v1/suppressions?email=ann@example.net');
    expect(listed.body.data).to.have.length(1);
    expect(listed.body.data[0]).to.include({ email: 'ann@example.net', reason: 'manual' });

    // again: kept as it was; nonsense: refused on the form, what was typed kept
    await page.getByLabel('Address to suppress').fill('ann@example.net');
    await page.getByLabel('Reason to record').selectOption('bounce');
    await page.getByRole('button', { name: 'Suppress address' }).click();
    expect(await page.getByRole('status').textContent()).to.include('already suppressed');
    expect((await t.api.get('/v1/suppressions?email=ann@example.net')).body.data[0].reason).to.equal('manual');
    await page.getByLabel('Address to suppress').fill('not an address');
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Suppress address' }).click(),
    ]);
    expect(refused.status()).to.equal(400);
    await page.getByRole('alert').waitFor();
    expect(await page.getByLabel('Address to suppress').inputValue()).to.equal('not an address');

    // the filters are the API's
    await page.goto('/dashboard/suppressions?reason=complaint');
    await page.getByText('No suppressed addresses match these filters.').waitFor();
    await page.goto('/dashboard/suppressions?email=EXAMPLE.net');
    await page.getByRole('button', { name: 'Remove ann@example.net' }).click();
    await page.waitForURL((u) => u.searchParams.get('removed') === 'ann@example.net');
    expect(await page.getByRole('status').textContent()).to.include('no longer suppressed');
    await page.getByText('No suppressed addresses yet.').waitFor();
    expect((await t.api.get('/v1/suppressions')).body.data).to.have.length(0);

    // one that ends: until a day, as the API's expires_at at the start of that day (UTC)
    const day = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);
    await page.getByLabel('Address to suppress').fill('bob@example.net');
    await page.getByLabel('Until (UTC day; empty: for ever)').fill(day);
    await page.getByRole('button', { name: 'Suppress address' }).click();
    await page.waitForURL((u) => u.searchParams.get('added') === 'bob@example.net');
    expect((await t.api.get('/v1/suppressions?email=bob@example.net')).body.data[0].expires_at).to.equal(
      `${day}T00:00:00.000Z`,
    );
    expect(await page.locator('tbody tr').first().textContent()).to.not.include('for ever');
    await context.close();
  });

  it('shows live sends today and this month against the limits, rising after a send', async function () {
    const t = await w.api.tenant({ mode: 'live' });
    const domain = `usage${Date.now().toString(36)}.test`;
    const now = Date.now();
    await w.api.deps.store.knex('domains').insert({
      id: newId('domain'),
      project_id: t.project.id,
      name: domain,
      status: 'verified',
      dkim_token: `tok${now}`,
      active_selector: 'ph1',
      created_at: now,
      updated_at: now,
    });
    await setProject(w.api.deps, t.project.id, { limits: { daily: 10, monthly: 100, verifications: 0 } });
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, t.key);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    const today = page.getByRole('row', { name: /Sent today/ });
    expect(await today.locator('td.used').textContent()).to.equal('0');

    const sent = await t.api.post('/v1/emails', {
      from: `shop@${domain}`,
      to: ['a@example.net', 'b@example.net'],
      subject: 'Hello',
      text: 'x',
    });
    expect(sent.status, sent.text).to.equal(202);
    await page.reload();
    expect(await today.locator('td.used').textContent()).to.equal('2');
    const meter = page.getByRole('meter', { name: 'Sent today' });
    expect([await meter.getAttribute('value'), await meter.getAttribute('max')]).to.deep.equal(['2', '10']);
    expect(await today.textContent()).to.include('2 of 10 (20%)');
    expect(
      await page
        .getByRole('row', { name: /Sent this month/ })
        .locator('td.used')
        .textContent(),
    ).to.equal('2');
    expect(await page.getByRole('row', { name: /Verifications this month/ }).textContent()).to.include('no limit');
    await context.close();
  });

  it('a key without the scope a section needs sees a 403 page there', async function () {
    const t = await w.api.tenant();
    const narrow = await t.newKey({ scopes: ['emails:read'] });
    const { context, page } = await signedIn(w.browser, w.api.baseUrl, narrow.key);
    for (const [path, scope] of [
      ['suppressions', 'suppressions:manage'],
      ['api-keys', 'keys:manage'],
      ['usage', 'usage:read'],
    ] as const) {
      const res = await page.goto(`/dashboard/${path}`);
      expect(res!.status(), path).to.equal(403);
      await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
      expect(await page.getByRole('alert').textContent()).to.include(scope);
    }
    await context.close();
  });
});
