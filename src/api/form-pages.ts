import type { Context, Middleware } from 'koa';
import { ApiError, apiError, validationError } from '../lib/errors.js';
import type { FormService } from '../modules/audience/forms/forms.service.js';
import type { FormPage } from '../modules/audience/forms/form-submissions.service.js';
import { confirmBody, confirmedBody, formBody, submittedBody } from './form-html.js';
import { formFields, methodNotAllowed, readBoundedBody, respondPage, tooLarge } from './public-page.js';

// A signup form's public addresses (docs/forms.md), beside the API without a key:
// GET /f/{id} the page; POST /f/{id} a submission, from the page (a form, answered with a page) or
// from a site's own form (JSON, answered with JSON; CORS for the form's allowed_origins only);
// GET /f/{id}/confirm/{token} a page with a Confirm button (link scanners follow links), POST
// confirms. JSON errors are the API's error body (api/errors.ts), thrown to the edge's handler.

/** A form of a few fields is far below this. */
const MAX_POST_BYTES = 16 * 1024;

const NOT_FOUND = '<p>There is no such form, or it is no longer open.</p>';
const LINK_NOT_VALID = '<p>This confirmation link is not valid, or it has expired: sign up again to get a new one.</p>';

/** CORS for a site embedding the form: only an Origin the form allows is told it may read the answer. */
function allowOrigin(ctx: Context, form: FormPage): boolean {
  ctx.vary('Origin');
  const origin = ctx.get('origin');
  if (!origin || !form.allowedOrigins.includes(origin)) return false;
  ctx.set('Access-Control-Allow-Origin', origin);
  return true;
}

function preflight(ctx: Context, form: FormPage): void {
  if (allowOrigin(ctx, form)) {
    ctx.set({
      'Access-Control-Allow-Methods': 'POST',
      'Access-Control-Allow-Headers': 'Content-Type',
      'Access-Control-Max-Age': '600',
    });
  }
  ctx.status = 204;
}

/** The JSON body of a site's own form: an object of fields. */
function jsonFields(body: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw validationError('body', 'is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw validationError('body', 'must be a JSON object of the form fields');
  return value as Record<string, unknown>;
}

/** The page's fields; of a name given twice the last counts (a ticked box after its hidden "false"). */
const pageFields = (body: Buffer) => Object.fromEntries(formFields(body).entries());

async function submitJson(ctx: Context, service: FormService, form: FormPage, body: Buffer): Promise<void> {
  ctx.set({ 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });
  const answer = await service.submit(form.id, ctx.ip, jsonFields(body));
  ctx.status = 202;
  ctx.body = { status: answer.status };
}

async function submitPage(ctx: Context, service: FormService, form: FormPage, body: Buffer): Promise<void> {
  const values = pageFields(body);
  try {
    const answer = await service.submit(form.id, ctx.ip, values);
    if (answer.redirectUrl) {
      ctx.set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' });
      ctx.status = 303;
      ctx.redirect(answer.redirectUrl);
      return;
    }
    respondPage(
      ctx,
      200,
      answer.status === 'pending_confirmation' ? 'Check your inbox' : 'You are signed up',
      submittedBody(answer.status),
    );
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    if (e.code === 'validation_error')
      return respondPage(
        ctx,
        400,
        form.name,
        formBody(form, values, { message: e.message, field: e.field }),
        form.redirectOrigin,
      );
    if (e.code === 'rate_limited') {
      ctx.set(e.headers);
      return respondPage(
        ctx,
        429,
        'Too many sign-ups',
        '<p>This form has had too many sign-ups in a short time. Please try again in a little while.</p>',
      );
    }
    if (e.code === 'not_found') return respondPage(ctx, 404, 'Form not found', NOT_FOUND);
    throw e;
  }
}

async function submission(ctx: Context, service: FormService, form: FormPage): Promise<void> {
  const type = ctx.get('content-type').split(';')[0].trim().toLowerCase();
  const json = type === 'application/json';
  if (json) allowOrigin(ctx, form);
  const body = await readBoundedBody(ctx, MAX_POST_BYTES);
  if (body === null) {
    if (!json) return tooLarge(ctx, 'A sign-up is a short form.');
    ctx.set('Connection', 'close');
    throw apiError('payload_too_large', `the body is larger than ${MAX_POST_BYTES} bytes`);
  }
  if (json) return submitJson(ctx, service, form, body);
  if (type !== 'application/x-www-form-urlencoded')
    throw validationError(
      'body',
      'Content-Type must be application/x-www-form-urlencoded (a page) or application/json',
    );
  return submitPage(ctx, service, form, body);
}

async function confirmation(ctx: Context, service: FormService, formId: string, token: string): Promise<void> {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && ctx.method !== 'POST')
    return methodNotAllowed(ctx, 'GET, HEAD, POST');
  if (ctx.method === 'POST') {
    const done = await service.confirm(formId, token);
    return done
      ? respondPage(ctx, 200, 'Subscription confirmed', confirmedBody(done))
      : respondPage(ctx, 404, 'Link not valid', LINK_NOT_VALID);
  }
  const c = await service.describeConfirmation(formId, token);
  if (!c) return respondPage(ctx, 404, 'Link not valid', LINK_NOT_VALID);
  return c.confirmed
    ? respondPage(ctx, 200, 'Subscription confirmed', confirmedBody(c))
    : respondPage(ctx, 200, 'Confirm your subscription', confirmBody(c));
}

export function formPages(service: FormService): Middleware {
  return async (ctx, next) => {
    const m = /^\/f\/([^/]+)(?:\/confirm\/([^/]+))?$/.exec(ctx.path);
    if (!m) {
      await next();
      return;
    }
    if (m[2] !== undefined) return confirmation(ctx, service, m[1], m[2]);
    if (!['GET', 'HEAD', 'POST', 'OPTIONS'].includes(ctx.method))
      return methodNotAllowed(ctx, 'GET, HEAD, POST, OPTIONS');
    const form = await service.page(m[1]);
    if (!form) {
      if (ctx.method === 'POST' && ctx.is('application/json')) throw apiError('not_found', `form ${m[1]} not found`);
      return respondPage(ctx, 404, 'Form not found', NOT_FOUND);
    }
    if (ctx.method === 'OPTIONS') return preflight(ctx, form);
    if (ctx.method === 'POST') return submission(ctx, service, form);
    respondPage(ctx, 200, form.name, formBody(form), form.redirectOrigin);
  };
}
