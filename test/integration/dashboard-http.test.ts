import { expect } from 'chai';
import { get } from 'node:http';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { waitFor } from '../helpers/wait.js';

// The dashboard's edge, over plain HTTP: what a browser is told and what it is refused.
eachDatabase('the dashboard over HTTP: sessions, CSRF and security headers', (db) => {
  let api: TestApi;
  let t: Tenant;
  before(async function () {
    api = await startTestApi(db().store);
    t = await api.tenant();
  });
  after(async function () {
    await api.stop();
  });

  const post = (path: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${api.baseUrl}${path}`, {
      method: 'POST',
      body: new URLSearchParams(form).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      redirect: 'manual',
    });

  /** Signs in; returns the cookie header and the page's CSRF token. */
  async function signIn(key = t.key): Promise<{ cookie: string; csrf: string }> {
    const r = await post('/dashboard/sign-in', { key });
    expect(r.status).to.equal(303);
    const cookie = r.headers.get('set-cookie')!.split(';')[0];
    const page = await (await fetch(`${api.baseUrl}/dashboard/emails`, { headers: { cookie } })).text();
    return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(page)![1] };
  }

  it('sends its security headers on every page: CSP without inline scripts, no framing', async function () {
    for (const path of ['/dashboard/sign-in', '/dashboard/nowhere']) {
      const r = await fetch(`${api.baseUrl}${path}`);
      const csp = r.headers.get('content-security-policy')!;
      expect(csp)
        .to.include("script-src 'self'")
        .and.include("frame-ancestors 'none'")
        .and.not.include('unsafe-inline');
      expect(r.headers.get('x-frame-options')).to.equal('DENY');
      expect(r.headers.get('x-content-type-options')).to.equal('nosniff');
    }
    const page = await (await fetch(`${api.baseUrl}/dashboard/sign-in`)).text();
    // scripts only from files: no inline script or handler attribute
    expect(page)
      .to.not.match(/<script(?![^>]*\bsrc=)[^>]*>/)
      .and.not.match(/\son[a-z]+=/);
  });

  it('sets the session cookie HttpOnly, SameSite=Strict and scoped to /dashboard', async function () {
    const r = await post('/dashboard/sign-in', { key: t.key });
    const setCookie = r.headers.get('set-cookie')!;
    expect(setCookie).to.match(/^posthorn_session=[A-Za-z0-9_-]{43};/);
    expect(setCookie.toLowerCase())
      .to.include('httponly')
      .and.include('samesite=strict')
      .and.include('path=/dashboard')
      .and.not.include('secure');
    expect(setCookie).to.not.include(t.key);
  });

  it('marks the cookie Secure when http.public_url is https', async function () {
    const other = await startTestApi(db().store, { http: { public_url: 'https://mail.example.test' } });
    try {
      const r = await fetch(`${other.baseUrl}/dashboard/sign-in`, {
        method: 'POST',
        body: new URLSearchParams({ key: t.key }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        redirect: 'manual',
      });
      expect(r.headers.get('set-cookie')!.toLowerCase()).to.include('secure');
    } finally {
      await other.stop();
    }
  });

  it('refuses a signed-in form without its CSRF token, and a form posted from another site', async function () {
    const { cookie, csrf } = await signIn();
    expect((await post('/dashboard/sign-out', {}, { cookie })).status).to.equal(403);
    expect((await post('/dashboard/sign-out', { csrf: 'x'.repeat(csrf.length) }, { cookie })).status).to.equal(403);
    expect((await post('/dashboard/sign-out', { csrf }, { cookie, origin: 'https://evil.example' })).status).to.equal(
      403,
    );
    expect((await post('/dashboard/sign-in', { key: t.key }, { origin: 'https://evil.example' })).status).to.equal(403);
    // still signed in: none of those did anything
    expect(
      (await fetch(`${api.baseUrl}/dashboard/emails`, { headers: { cookie }, redirect: 'manual' })).status,
    ).to.equal(200);
    const out = await post('/dashboard/sign-out', { csrf }, { cookie, origin: api.baseUrl });
    expect(out.status).to.equal(303);
    expect(
      (await fetch(`${api.baseUrl}/dashboard/emails`, { headers: { cookie }, redirect: 'manual' })).status,
    ).to.equal(303);
  });

  it('reads a form with a file (multipart) with its CSRF token checked, and refuses a sign-in form over 16 KB', async function () {
    const { cookie, csrf } = await signIn();
    const multipart = (token: string) => {
      const body = new FormData();
      body.set('csrf', token);
      body.set('file', new Blob(['email\njane@example.org\n'], { type: 'text/csv' }), 'contacts.csv');
      return fetch(`${api.baseUrl}/dashboard/sign-out`, {
        method: 'POST',
        body,
        headers: { cookie },
        redirect: 'manual',
      });
    };
    expect((await multipart('x'.repeat(csrf.length))).status).to.equal(403);
    const out = await multipart(csrf);
    expect(out.status).to.equal(303);
    expect(out.headers.get('location')).to.match(/\/dashboard\/sign-in$/);
    const big = await post('/dashboard/sign-in', { key: t.key, pad: 'x'.repeat(20_000) });
    expect(big.status).to.equal(413);
  });

  it('goes back only to a dashboard page after signing in, never to another site', async function () {
    expect(
      (await post('/dashboard/sign-in', { key: t.key, next: '/dashboard/emails?status=failed' })).headers.get(
        'location',
      ),
    ).to.equal('/dashboard/emails?status=failed');
    for (const next of ['https://evil.example/', '//evil.example/dashboard/', '/dashboard/\\evil', '/v1/emails']) {
      expect((await post('/dashboard/sign-in', { key: t.key, next })).headers.get('location')).to.equal(
        '/dashboard/emails',
      );
    }
  });

  it('refuses a suspended project at sign-in, and a wrong key with 401', async function () {
    const s = await api.tenant();
    await s.suspend();
    const r = await post('/dashboard/sign-in', { key: s.key });
    expect(r.status).to.equal(403);
    expect(await r.text()).to.include('suspended');
    expect(r.headers.get('set-cookie')).to.equal(null);
    expect((await post('/dashboard/sign-in', { key: 'ph_live_nope' })).status).to.equal(401);
  });

  it('serves its script and stylesheet from the package, and nothing else from there', async function () {
    const js = await fetch(`${api.baseUrl}/dashboard/assets/dashboard.js`);
    expect(js.status).to.equal(200);
    expect(js.headers.get('content-type')).to.include('text/javascript');
    expect(await js.text()).to.include('data-live-src');
    expect((await fetch(`${api.baseUrl}/dashboard/assets/dashboard.css`)).headers.get('content-type')).to.include(
      'text/css',
    );
    for (const name of ['..%2Fpackage.json', 'dashboard.ts', '%2e%2e%2f%2e%2e%2fpackage.json'])
      expect((await fetch(`${api.baseUrl}/dashboard/assets/${name}`)).status).to.equal(404);
  });

  it('answers 404, not 500, for an id that is not valid percent-encoding, and keeps a / inside an id', async function () {
    const { cookie } = await signIn();
    for (const path of ['/dashboard/emails/%25', '/dashboard/domains/%E0%A4%A', '/dashboard/webhooks/a%2Fdeliveries']) {
      const r = await fetch(`${api.baseUrl}${path}`, { headers: { cookie } });
      expect(r.status, path).to.equal(404);
    }
  });

  it("logs a signed-in page under its key (GET /v1/logs) and holds the key's rate limit", async function () {
    const u = await api.tenant();
    const { cookie } = await signIn(u.key);
    expect((await fetch(`${api.baseUrl}/dashboard/emails?status=failed`, { headers: { cookie } })).status).to.equal(
      200,
    );
    const logged = await waitFor(
      async () => {
        const lines = (
          (await u.api.get('/v1/logs')).body.data as Array<{ path: string; key_id: string; status: number }>
        ).filter((l) => l.path === '/dashboard/emails');
        return lines.length ? lines : null;
      },
      5000,
      'the dashboard request in the log',
    );
    expect(logged[0]).to.include({ key_id: u.keyId, status: 200 });

    const slow = await startTestApi(db().store, { limits: { requests_per_second: 1 } });
    try {
      const r = await fetch(`${slow.baseUrl}/dashboard/sign-in`, {
        method: 'POST',
        body: new URLSearchParams({ key: u.key }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        redirect: 'manual',
      });
      const c = r.headers.get('set-cookie')!.split(';')[0];
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await fetch(`${slow.baseUrl}/dashboard/emails`, { headers: { cookie: c } })).status);
      expect(statuses).to.include(429);
    } finally {
      await slow.stop();
    }
  });

  it('lets the browser revalidate its script and stylesheet (ETag, 304)', async function () {
    const first = await fetch(`${api.baseUrl}/dashboard/assets/dashboard.js`);
    const etag = first.headers.get('etag')!;
    expect(first.headers.get('cache-control')).to.equal('no-cache');
    expect(etag).to.match(/^"[A-Za-z0-9_-]{22}"$/);
    // node:http, not fetch: fetch adds Cache-Control: no-cache to a conditional request, as the Fetch standard says
    const status = await new Promise<number>((resolve, reject) => {
      get(`${api.baseUrl}/dashboard/assets/dashboard.js`, { headers: { 'if-none-match': etag } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      }).on('error', reject);
    });
    expect(status).to.equal(304);
  });

  it('cancels a scheduled email from its page, which then shows it cancelled without the button', async function () {
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const e = (
      await t.api.post('/v1/emails', {
        from: 'a@example.test',
        to: ['delivered@simulator.posthorn.test'],
        subject: 'Later',
        text: 'x',
        scheduled_at: at,
      })
    ).body;
    const { cookie, csrf } = await signIn();
    const before = await (await fetch(`${api.baseUrl}/dashboard/emails/${e.id}`, { headers: { cookie } })).text();
    expect(before).to.contain(`action="/dashboard/emails/${e.id}/cancel"`);
    const r = await post(`/dashboard/emails/${e.id}/cancel`, { csrf }, { cookie, origin: api.baseUrl });
    expect(r.status).to.equal(303);
    expect(r.headers.get('location')).to.equal(`/dashboard/emails/${e.id}`);
    expect((await t.api.get(`/v1/emails/${e.id}`)).body.status).to.equal('cancelled');
    const after = await (await fetch(`${api.baseUrl}/dashboard/emails/${e.id}`, { headers: { cookie } })).text();
    expect(after).to.not.contain('Cancel this email');
    expect(after).to.match(/class="badge s-cancelled"[^>]*>cancelled</);
    // without the CSRF token nothing happens
    const other = (
      await t.api.post('/v1/emails', {
        from: 'a@example.test',
        to: ['x@example.test'],
        subject: 's',
        text: 't',
        scheduled_at: at,
      })
    ).body;
    expect((await post(`/dashboard/emails/${other.id}/cancel`, {}, { cookie, origin: api.baseUrl })).status).to.equal(
      403,
    );
    expect((await t.api.get(`/v1/emails/${other.id}`)).body.status).to.equal('scheduled');
  });

  it('is not served when dashboard.enabled is false', async function () {
    const off = await startTestApi(db().store, { dashboard: { enabled: false } });
    try {
      expect((await fetch(`${off.baseUrl}/dashboard/sign-in`)).status).to.equal(404);
    } finally {
      await off.stop();
    }
  });
});
