import type { Middleware } from 'koa';
import type { UnsubscribeService } from '../modules/receiving/unsubscribe/unsubscribe.service.js';
import { escapeHtml } from '../lib/html.js';
import { maskedAddress, methodNotAllowed, readBoundedBody, respondPage, tooLarge } from './public-page.js';

// The public unsubscribe links of one-click unsubscribe (RFC 8058; docs/unsubscribe.md), served
// beside the API without a key: `GET /u/{token}` shows a confirmation page and changes nothing
// (link scanners and prefetchers follow links), `POST /u/{token}` unsubscribes, as a mail client's
// one-click button or the page's own button does. No script, no tracking, nothing from elsewhere.

/** The POST's form (`List-Unsubscribe=One-Click`, and `via=page` from the page's button) is far below this. */
const MAX_POST_BYTES = 4096;

const NOT_VALID = '<p>This unsubscribe link is not valid, or the mail it came with is no longer kept.</p>';

export function unsubscribePages(service: UnsubscribeService): Middleware {
  return async (ctx, next) => {
    const m = /^\/u\/([^/]+)$/.exec(ctx.path);
    if (!m) {
      await next();
      return;
    }
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && ctx.method !== 'POST')
      return methodNotAllowed(ctx, 'GET, HEAD, POST');
    const token = m[1];
    if (ctx.method === 'POST') {
      const body = await readBoundedBody(ctx, MAX_POST_BYTES);
      if (body === null) return tooLarge(ctx, 'An unsubscribe request is a short form.');
      const done = await service.unsubscribe(
        token,
        /(^|&)via=page(&|$)/.test(body.toString('latin1')) ? 'page' : 'one_click',
      );
      if (!done) return respondPage(ctx, 404, 'Link not valid', NOT_VALID);
      return respondPage(
        ctx,
        200,
        'You are unsubscribed',
        `<p>${escapeHtml(maskedAddress(done.address))} will get no more mail of this kind from ${escapeHtml(done.domain)}. Mail you need, such as receipts or password resets, still arrives.</p>`,
      );
    }
    const who = await service.describe(token);
    if (!who) return respondPage(ctx, 404, 'Link not valid', NOT_VALID);
    respondPage(
      ctx,
      200,
      'Unsubscribe?',
      `<p>Stop mail of this kind from ${escapeHtml(who.domain)} to ${escapeHtml(maskedAddress(who.address))}?</p>
<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><input type="hidden" name="via" value="page"><button type="submit">Unsubscribe</button></form>`,
    );
  };
}
