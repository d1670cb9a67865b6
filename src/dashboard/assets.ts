import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Context } from 'koa';
import { PACKAGE_ROOT } from '../config/package-root.js';

// The dashboard's script and stylesheet, shipped in the package (assets/dashboard/) and read
// once: nothing is fetched from a CDN, and an air-gapped server shows the same pages.
const TYPES: Record<string, string> = {
  'dashboard.css': 'text/css; charset=utf-8',
  'dashboard.js': 'text/javascript; charset=utf-8',
};
const files = new Map<string, { body: Buffer; etag: string }>();

function fileOf(name: string): { body: Buffer; etag: string } {
  let file = files.get(name);
  if (!file) {
    const body = readFileSync(join(PACKAGE_ROOT, 'assets', 'dashboard', name));
    file = { body, etag: createHash('sha256').update(body).digest('base64url').slice(0, 22) };
    files.set(name, file);
  }
  return file;
}

export function serveAsset(ctx: Context, name: string): void {
  const type = TYPES[name];
  if (!type) return;
  const { body, etag } = fileOf(name);
  // the pages name the assets without a version: each use asks again (a 304 while the file is the
  // same), so that an upgrade never runs an old script against new pages
  ctx.set('Cache-Control', 'no-cache');
  ctx.etag = etag;
  ctx.status = 200;
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  ctx.type = type;
  ctx.body = body;
}
