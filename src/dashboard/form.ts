import type { Context } from 'koa';
import { ApiError, validationError } from '../lib/errors.js';

// A template's HTML may be 1,000,000 characters (interface §8), which URL-encoding can triple.
const MAX_FORM_BYTES = 4 * 1024 * 1024;
// a CSV file of contacts; the import reads it in batches
const MAX_UPLOAD_BYTES = 16 * 1024 * 1024;

/** A posted form: its text fields, and the files of a multipart form (a CSV to import). */
export interface PostedForm {
  fields: URLSearchParams;
  files: Map<string, { name: string; type: string; bytes: Buffer }>;
}

/**
 * A posted HTML form: application/x-www-form-urlencoded up to 4 MB, or
 * multipart/form-data (a form with a file) up to 16 MB. Multipart is parsed
 * by Node's own fetch implementation (Response.formData), so no parser of
 * ours reads the boundaries. `maxBytes` is a smaller limit for a form
 * anyone may post (the sign-in).
 */
export async function readForm(ctx: Context, maxBytes?: number): Promise<PostedForm> {
  const multipart = ctx.is('multipart/form-data') !== false;
  if (!multipart && !ctx.is('application/x-www-form-urlencoded'))
    throw validationError('body', 'send the form as application/x-www-form-urlencoded or multipart/form-data');
  const limit = maxBytes ?? (multipart ? MAX_UPLOAD_BYTES : MAX_FORM_BYTES);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new ApiError(413, 'payload_too_large', `the form is larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  const body = Buffer.concat(chunks);
  if (!multipart) return { fields: new URLSearchParams(body.toString('utf8')), files: new Map() };
  let data: FormData;
  try {
    data = await new Response(body, { headers: { 'content-type': ctx.get('content-type') } }).formData();
  } catch {
    throw validationError('body', 'the form could not be read as multipart/form-data');
  }
  const form: PostedForm = { fields: new URLSearchParams(), files: new Map() };
  for (const [name, value] of data) {
    if (typeof value === 'string') form.fields.append(name, value);
    else form.files.set(name, { name: value.name, type: value.type, bytes: Buffer.from(await value.arrayBuffer()) });
  }
  return form;
}
