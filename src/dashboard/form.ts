import type { Context } from 'koa';
import { validationError } from '../lib/errors.js';

const MAX_FORM_BYTES = 64 * 1024;

/** A posted HTML form (application/x-www-form-urlencoded), up to 64 KB. */
export async function readForm(ctx: Context): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded'))
    throw validationError('body', 'send the form as application/x-www-form-urlencoded');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) throw validationError('body', `the form is larger than ${MAX_FORM_BYTES} bytes`);
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
