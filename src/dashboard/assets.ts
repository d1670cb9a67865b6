import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Context } from 'koa';
import { PACKAGE_ROOT } from '../config/package-root.js';

// The dashboard's script and stylesheet, shipped in the package (assets/dashboard/) and read
// once: nothing is fetched from a CDN, and an air-gapped server shows the same pages.
const TYPES: Record<string, string> = { 'dashboard.css': 'text/css; charset=utf-8', 'dashboard.js': 'text/javascript; charset=utf-8' };
const cache = new Map<string, Buffer>();

export function serveAsset(ctx: Context, name: string): void {
  const type = TYPES[name];
  if (!type) return;
  let body = cache.get(name);
  if (!body) {
    body = readFileSync(join(PACKAGE_ROOT, 'assets', 'dashboard', name));
    cache.set(name, body);
  }
  ctx.type = type;
  // the pages name the assets without a version: a day's caching, revalidated after an upgrade
  ctx.set('Cache-Control', 'public, max-age=86400');
  ctx.body = body;
}
