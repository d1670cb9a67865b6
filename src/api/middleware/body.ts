import type { IncomingMessage } from 'node:http';
import { validationError } from '../../lib/errors.js';

/** Largest JSON body: 10 MB of attachments as base64 (~13.4 MB) plus html and text of 1,000,000 characters each. */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;

export interface ParsedBody {
  raw: Buffer | null;
  value: unknown;
}

/** Read and parse a JSON request body; every failure is a 400 validation_error naming the body. */
export async function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<ParsedBody> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > limit) {
    req.resume();
    throw validationError('body', `is larger than the limit of ${limit} bytes`);
  }
  const { chunks, size } = await readAll(req, limit);
  if (size === 0) return { raw: null, value: undefined };
  const type = String(req.headers['content-type'] ?? 'application/json').toLowerCase();
  if (!/^application\/([a-z0-9.+-]*\+)?json\b/.test(type))
    throw validationError('body', 'Content-Type must be application/json');
  const raw = Buffer.concat(chunks, size);
  const text = decodeUtf8(raw);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw validationError('body', `is not valid JSON (${(e as Error).message})`);
  }
  // Strict UTF-8 holds no surrogate, so only a \u escape can make one. Over a body without escapes
  // indexOf costs a tenth of the regex (this runs on every accept); the parsed value is walked only
  // for a body that escapes a surrogate at all.
  if (text.indexOf('\\u') !== -1 && SURROGATE_ESCAPE.test(text)) {
    const at = loneSurrogateAt(value, '');
    if (at !== null)
      throw validationError(
        at || 'body',
        'must not contain a lone UTF-16 surrogate (\\uD800-\\uDFFF without its pair)',
      );
  }
  return { raw, value };
}

// Fatal: a lenient decode turns invalid bytes into U+FFFD, and the body stored is then not the one sent.
// ignoreBOM keeps a BOM in the text, which JSON.parse refuses as before.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE = /\p{Cs}/u;

function decodeUtf8(raw: Buffer): string {
  try {
    return UTF8.decode(raw);
  } catch {
    throw validationError('body', 'is not valid UTF-8');
  }
}

/**
 * Where a string of the parsed body holds a surrogate without its pair, as
 * a field path (`to[0]`, `variables.name`; '' for the body itself), or
 * null. JSON.parse keeps such an escape as a lone code unit, which
 * storing or encoding as UTF-8 would turn into U+FFFD.
 */
function loneSurrogateAt(value: unknown, path: string): string | null {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? path : null;
  if (value === null || typeof value !== 'object') return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const at = loneSurrogateAt(value[i], `${path}[${i}]`);
      if (at !== null) return at;
    }
    return null;
  }
  for (const [key, item] of Object.entries(value)) {
    if (LONE_SURROGATE.test(key)) return path;
    const at = loneSurrogateAt(item, path ? `${path}.${key}` : key);
    if (at !== null) return at;
  }
  return null;
}

/** Plain listeners rather than an async iterator: this runs for every request. */
function readAll(req: IncomingMessage, limit: number): Promise<{ chunks: Buffer[]; size: number }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.resume();
        reject(validationError('body', `is larger than the limit of ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve({ chunks, size }));
    req.once('error', reject);
  });
}
