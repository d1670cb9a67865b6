// npm run docs: rewrite docs/CONFIG.md from the config schema.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configDoc } from '../src/config/docs.js';
import { PACKAGE_ROOT } from '../src/config/package-root.js';

writeFileSync(join(PACKAGE_ROOT, 'docs', 'CONFIG.md'), configDoc());
