import type { Context, Middleware } from 'koa';
import type { UnsubscribeService } from '../modules/unsubscribe/unsubscribe.service.js';

// The public unsubscribe links of one-click unsubscribe (RFC 8058; docs/unsubscribe.md), served
// beside the API without a key: `GET /u/{token}` shows a confirmation page and changes nothing
// (link scanners and prefetchers follow links), `POST /u/{token}` unsubscribes, as a mail client's
// one-click button or the page's own button does. No script, no tracking, nothing from elsewhere.

const HEADERS = {
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'X-Robots-Tag': 'noindex',
};
const MAX_POST_BYTES = 4096;

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** r•••@example.com: enough for the person to know it is theirs, little for anyone holding a forwarded link. */
const masked = (address: string) => {
  const at = address.lastIndexOf('@');
  return `${address.slice(0, Math.min(2, at))}•••${address.slice(at)}`;
};

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escape(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}button{font:inherit;padding:.5rem 1rem;border:1px solid #1a1a1a;background:#1a1a1a;color:#fff;border-radius:4px;cursor:pointer}</style></head>
<body><main><h1>${escape(title)}</h1>${body}</main></body></html>`;
}

/** The POST's form (`List-Unsubscribe=One-Click`, and `via=page` from the page's button); null past 4 KB, which no such form reaches. */
async function formOf(ctx: Context): Promise<string | null> {
  if (Number(ctx.get('content-length') || 0) > MAX_POST_BYTES) return null;
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_POST_BYTES) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('latin1');
}

export function unsubscribePages(service: UnsubscribeService): Middleware {
  return async (ctx, next) => {
    const m = /^\/u\/([^/]+)$/.exec(ctx.path);
    if (!m) return next();
    ctx.set(HEADERS);
    ctx.type = 'text/html; charset=utf-8';
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && ctx.method !== 'POST') {
      ctx.status = 405;
      ctx.set('Allow', 'GET, HEAD, POST');
      ctx.body = page('Not allowed', '<p>This link takes GET and POST only.</p>');
      return;
    }
    const token = m[1]!;
    if (ctx.method === 'POST') {
      const body = await formOf(ctx);
      if (body === null) {
        ctx.status = 413;
        ctx.set('Connection', 'close');
        ctx.body = page('Too large', '<p>An unsubscribe request is a short form.</p>');
        return;
      }
      const done = await service.unsubscribe(token, /(^|&)via=page(&|$)/.test(body) ? 'page' : 'one_click');
      ctx.status = done ? 200 : 404;
      ctx.body = done
        ? page('You are unsubscribed', `<p>${escape(masked(done.address))} will get no more mail of this kind from ${escape(done.domain)}. Mail you need, such as receipts or password resets, still arrives.</p>`)
        : page('Link not valid', '<p>This unsubscribe link is not valid, or the mail it came with is no longer kept.</p>');
      return;
    }
    const who = await service.describe(token);
    ctx.status = who ? 200 : 404;
    ctx.body = who
      ? page(
          'Unsubscribe?',
          `<p>Stop mail of this kind from ${escape(who.domain)} to ${escape(masked(who.address))}?</p>
<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><input type="hidden" name="via" value="page"><button type="submit">Unsubscribe</button></form>`,
        )
      : page('Link not valid', '<p>This unsubscribe link is not valid, or the mail it came with is no longer kept.</p>');
  };
}
