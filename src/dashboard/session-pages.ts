import type { Context } from 'koa';
import { ApiError } from '../lib/errors.js';
import { SESSION_TTL_MS } from '../modules/account/sessions/sessions.service.js';
import { readForm } from './form.js';
import { BASE } from './pages/layout.js';
import { signInPage } from './pages/sign-in.js';
import { COOKIE, page, seeOther, type PagesDeps } from './respond.js';

/** Sign in (an API key for a session cookie) and sign out. */
export function sessionPages({ router, services, secure, signedIn }: PagesDeps): void {
  const cookie = (maxAge: number) => ({
    httpOnly: true,
    sameSite: 'strict' as const,
    secure,
    path: BASE,
    maxAge,
    overwrite: true,
  });
  // Behind a proxy that ends TLS (http.public_url is https) the request reaches us over plain
  // HTTP, over which Koa refuses to set a Secure cookie unless told the connection counts as secure.
  const setCookie = (ctx: Context, value: string, maxAge: number) => {
    if (secure) (ctx.cookies as unknown as { secure: boolean }).secure = true;
    ctx.cookies.set(COOKIE, value, cookie(maxAge));
  };

  router.get('/sign-in', async (ctx) => {
    const next = safeNext(ctx.query.next);
    if (await services.sessions.resolve(ctx.cookies.get(COOKIE))) return seeOther(ctx, next ?? `${BASE}/emails`);
    page(ctx, 200, signInPage(next ? { next } : {}));
  });

  router.post('/sign-in', async (ctx) => {
    // anyone may post it: a key and an address fit in a few KB
    const form = (await readForm(ctx, 16 * 1024)).fields;
    const next = safeNext(form.get('next'));
    try {
      // ctx.ip is the socket's address: the app trusts no X-Forwarded-For (api/app.ts)
      const { token } = await services.sessions.signIn(form.get('key') ?? '', ctx.ip);
      setCookie(ctx, token, SESSION_TTL_MS);
      seeOther(ctx, next ?? `${BASE}/emails`);
    } catch (e) {
      if (!(e instanceof ApiError) || e.status >= 500) throw e;
      ctx.set(e.headers);
      page(ctx, e.status, signInPage({ error: signInError(e), ...(next ? { next } : {}) }));
    }
  });

  router.post(
    '/sign-out',
    signedIn(async (ctx) => {
      await services.sessions.signOut(ctx.cookies.get(COOKIE));
      setCookie(ctx, '', 0);
      seeOther(ctx, `${BASE}/sign-in`);
    }),
  );
}

function signInError(e: ApiError): string {
  if (e.code === 'account_suspended') return 'This project is suspended.';
  if (e.code === 'rate_limited')
    return `Too many failed sign-ins from your address. Try again in ${inWords(Number(e.headers['Retry-After']))}.`;
  return 'This key is not valid, or it was revoked.';
}

/** A wait in whole seconds as a reader says it: "45 seconds", "5 minutes". */
function inWords(seconds: number): string {
  if (seconds < 120) return seconds === 1 ? '1 second' : `${seconds} seconds`;
  return `${Math.ceil(seconds / 60)} minutes`;
}

/** Where to go after signing in: a dashboard page only, never another site. */
function safeNext(v: unknown): string | undefined {
  return typeof v === 'string' &&
    v.startsWith(`${BASE}/`) &&
    !v.startsWith('//') &&
    !v.includes('\\') &&
    !/[\r\n]/.test(v)
    ? v
    : undefined;
}
