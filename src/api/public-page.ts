import type { Context } from 'koa';
import { escapeHtml } from '../lib/html.js';

// What the public pages served beside the API without a key have in common (the unsubscribe link,
// the preference page, signup forms): one small HTML shell, escaped text, the same headers, and a
// POST body read up to a bound. No script, no cookie, no tracking, nothing loaded from elsewhere.

/**
 * The pages' policy. `formAction`: an origin the page's form may also go to.
 * Chromium checks form-action against the target of the POST's redirect as
 * well, so a signup form with a redirect_url names that URL's origin here.
 */
export const pageCsp = (formAction: string | null = null) =>
  `default-src 'none'; style-src 'unsafe-inline'; form-action 'self'${formAction ? ` ${formAction}` : ''}; frame-ancestors 'none'; base-uri 'none'`;

export const PAGE_HEADERS = {
  'Content-Security-Policy': pageCsp(),
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'X-Robots-Tag': 'noindex',
};

/** r•••@example.com: enough for the person to know it is theirs, little for anyone holding a forwarded link. */
export const maskedAddress = (address: string) => {
  const at = address.lastIndexOf('@');
  return `${address.slice(0, Math.min(2, at))}•••${address.slice(at)}`;
};

// Contrast of every colour against white is at least 4.5:1 (WCAG 2.1 AA); focus stays visible.
const STYLE = [
  'body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}',
  'button{font:inherit;padding:.5rem 1rem;border:1px solid #1a1a1a;background:#1a1a1a;color:#fff;border-radius:4px;cursor:pointer}',
  'label{display:block;font-weight:600}',
  'input[type=text],input[type=email],input[type=number],input[type=date]{font:inherit;width:100%;box-sizing:border-box;padding:.4rem;border:1px solid #555;border-radius:4px;margin:.25rem 0 1rem}',
  '.choice{display:flex;gap:.5rem;align-items:flex-start;margin:.5rem 0}.choice label{font-weight:400}.choice input{margin-top:.35rem}',
  '.hint{color:#4a4a4a;margin:0 0 .5rem 1.6rem;font-size:.9rem}.optional{color:#4a4a4a;font-weight:400;font-size:.9rem}',
  'fieldset{border:1px solid #ccc;border-radius:4px;margin:0 0 1rem;padding:.5rem 1rem}',
  '.status{border-left:4px solid #1d6b32;padding:.25rem .75rem;background:#eef7f0}',
  '.error{border-left:4px solid #a4161a;padding:.25rem .75rem;background:#fbeeee}',
  ':focus-visible{outline:3px solid #1f5fbf;outline-offset:2px}',
  // the honeypot: out of sight and out of the accessibility tree, still in the form for bots to fill
  '.hp{position:absolute;left:-10000px;top:auto;width:1px;height:1px;overflow:hidden}',
].join('');

export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>
<style>${STYLE}</style></head>
<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
}

/** Answers with a page, the shared headers set; `formAction` as pageCsp takes it. */
export function respondPage(
  ctx: Context,
  status: number,
  title: string,
  body: string,
  formAction: string | null = null,
): void {
  ctx.set(PAGE_HEADERS);
  if (formAction) ctx.set('Content-Security-Policy', pageCsp(formAction));
  ctx.type = 'text/html; charset=utf-8';
  ctx.status = status;
  ctx.body = page(title, body);
}

/** 405 for a method the page does not take. */
export function methodNotAllowed(ctx: Context, allow: string): void {
  ctx.set('Allow', allow);
  respondPage(ctx, 405, 'Not allowed', `<p>This address takes ${escapeHtml(allow)} only.</p>`);
}

/** The POST body, or null past `max` bytes (the caller answers 413): these forms are short. */
export async function readBoundedBody(ctx: Context, max: number): Promise<Buffer | null> {
  if (Number(ctx.get('content-length') || 0) > max) return null;
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** 413 as a page, closing the connection: the rest of the body is not read. */
export function tooLarge(ctx: Context, what: string): void {
  ctx.set('Connection', 'close');
  respondPage(ctx, 413, 'Too large', `<p>${escapeHtml(what)}</p>`);
}

/** An application/x-www-form-urlencoded body (UTF-8, as a page of lang en with charset utf-8 sends it). */
export const formFields = (body: Buffer) => new URLSearchParams(body.toString('utf8'));
