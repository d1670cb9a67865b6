// npm run docs: rewrite what docs/ holds that is generated: CONFIG.md from the config schema,
// openapi.json and API.md from the routes, the bounce reasons' table in bounces.md from reasons.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configDoc } from '../src/config/docs.js';
import { PACKAGE_ROOT, PACKAGE_VERSION } from '../src/config/package-root.js';
import { apiReference, referenceDocument } from '../src/api/api-reference.js';
import { withReasonsTable } from '../src/modules/receiving/bounces/reasons-table.js';

writeFileSync(join(PACKAGE_ROOT, 'docs', 'CONFIG.md'), configDoc());
const doc = referenceDocument(PACKAGE_VERSION);
writeFileSync(join(PACKAGE_ROOT, 'docs', 'openapi.json'), `${JSON.stringify(doc, null, 2)}\n`);
writeFileSync(join(PACKAGE_ROOT, 'docs', 'API.md'), `${apiReference(doc)}\n`);
const bounces = join(PACKAGE_ROOT, 'docs', 'bounces.md');
writeFileSync(bounces, withReasonsTable(readFileSync(bounces, 'utf8')));
