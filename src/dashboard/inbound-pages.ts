import { attachmentDisposition } from '../lib/content-disposition.js';
import type { Context } from 'koa';
import type { RouteCaller } from '../api/route-caller.js';
import { ApiError } from '../lib/errors.js';
import { presentReport } from '../modules/receiving/bounces/report.presenter.js';
import { readReport } from '../modules/receiving/bounces/report.js';
import { emailOfMessageId } from '../modules/receiving/bounces/verp.js';
import type { Session } from '../modules/account/sessions/sessions.service.js';
import type { ReadingJson } from './pages/inbound-reading.js';
import { inboundListPage, inboundPage, type InboundJson, type InboundSummaryJson } from './pages/inbound.js';
import { emailHtml, page, text, type PagesDeps } from './respond.js';

// A file handed to the browser to save: should it be opened in a tab anyway, it runs nothing.
const DOWNLOAD_CSP = "sandbox; default-src 'none'";
const MIME_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i;

/** Inbound: received mail, newest first; a message with its HTML, text, attachments and, for a bounce or complaint, what it reports. */
export function inboundPages({ router, call, signedIn }: PagesDeps): void {
  router.get(
    '/inbound',
    signedIn(async (ctx, session) => {
      const cursor = text(ctx.query.cursor);
      const list = (await call(session.principal, 'GET', '/v1/inbound', { query: cursor ? { cursor } : {} })).body as {
        data: InboundSummaryJson[];
        next_cursor: string | null;
      };
      page(ctx, 200, inboundListPage(session, list, !cursor));
    }),
  );
  router.get(
    '/inbound/:id',
    signedIn(async (ctx, session) => {
      const id = encodeURIComponent(ctx.params.id);
      const m = (await call(session.principal, 'GET', `/v1/inbound/${id}`)).body as InboundJson;
      const raw = (await call(session.principal, 'GET', `/v1/inbound/${id}/raw`)).body as Buffer;
      page(ctx, 200, inboundPage(session, m, await readingOf(call, session, raw)));
    }),
  );
  router.get(
    '/inbound/:id/html',
    signedIn(async (ctx, session) => {
      const m = (await call(session.principal, 'GET', `/v1/inbound/${encodeURIComponent(ctx.params.id)}`))
        .body as InboundJson;
      emailHtml(ctx, m.html);
    }),
  );
  router.get(
    '/inbound/:id/raw',
    signedIn(async (ctx, session) => {
      const id = encodeURIComponent(ctx.params.id);
      const raw = (await call(session.principal, 'GET', `/v1/inbound/${id}/raw`)).body as Buffer;
      download(ctx, raw, 'message/rfc822', attachmentDisposition(`${ctx.params.id}.eml`));
    }),
  );
  router.get(
    '/inbound/:id/attachments/:index',
    signedIn(async (ctx, session) => {
      const res = await call(
        session.principal,
        'GET',
        `/v1/inbound/${encodeURIComponent(ctx.params.id)}/attachments/${encodeURIComponent(ctx.params.index)}`,
      );
      const type = res.headers?.['Content-Type'] ?? '';
      // the API names the file already, exactly (RFC 6266 filename*)
      const disposition =
        res.headers?.['Content-Disposition'] ?? attachmentDisposition(`attachment-${ctx.params.index}`);
      download(ctx, res.body as Buffer, MIME_TYPE.test(type) ? type : 'application/octet-stream', disposition);
    }),
  );
}

/** A body the browser saves rather than shows (`disposition`: lib/content-disposition.ts). */
function download(ctx: Context, body: Buffer, type: string, disposition: string): void {
  ctx.set('Content-Security-Policy', DOWNLOAD_CSP);
  ctx.set('Content-Disposition', disposition);
  ctx.type = type;
  ctx.body = body;
}

/**
 * What the bounce reader makes of the message, read from the bytes the API
 * returns (the same pure reader as `posthorn inbound parse`), and the email
 * it is about when its Message-ID is one the appliance wrote for an email
 * this key can see. Ordinary mail has no reading.
 */
async function readingOf(call: RouteCaller, session: Session, raw: Buffer): Promise<ReadingJson | null> {
  const report = readReport(raw);
  if (report.kind === 'other') return null;
  const original = report.originalMessageId;
  const host = original ? /@([^>]+)>$/.exec(original)?.[1] : undefined;
  const candidate = original && host ? emailOfMessageId(original, host) : null;
  return { ...presentReport(report), email_id: candidate ? await visibleEmail(call, session, candidate) : null };
}

/** The email's id when this key's project has it (a key without emails:read gets the id, and a 403 page behind the link). */
async function visibleEmail(call: RouteCaller, session: Session, id: string): Promise<string | null> {
  try {
    await call(session.principal, 'GET', `/v1/emails/${id}`);
    return id;
  } catch (e) {
    if (e instanceof ApiError && e.code === 'not_found') return null;
    if (e instanceof ApiError && e.code === 'forbidden') return id;
    throw e;
  }
}
