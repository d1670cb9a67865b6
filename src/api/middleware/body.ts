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
  if (!/^application\/([a-z0-9.+-]*\+)?json\b/.test(type)) throw validationError('body', 'Content-Type must be application/json');
  const raw = Buffer.concat(chunks, size);
  try {
    return { raw, value: JSON.parse(raw.toString('utf8')) };
  } catch (e) {
    throw validationError('body', `is not valid JSON (${(e as Error).message})`);
  }
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
