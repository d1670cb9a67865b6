import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(): string {
  // Walk up rather than count "..": the code runs from src/ under tests and from dist/src/ once built.
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'posthorn') return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('cannot find the posthorn package root');
    dir = up;
  }
}

export const PACKAGE_ROOT = findRoot();
export const PACKAGE_VERSION = (
  JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;
