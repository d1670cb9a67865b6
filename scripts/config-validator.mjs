// `npm run build`, after tsc: writes dist/src/config/config-validator.cjs, the config schema's
// validator as code (ajv's standalone output), which src/config/config-validator.ts loads instead
// of compiling the schema at each start (~170 ms of every CLI call and serve start).
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { Ajv } = require('ajv');
const standaloneCode = require('ajv/dist/standalone').default;
const addFormats = require('ajv-formats');
const dist = new URL('../dist/src/config/', import.meta.url);
const { ConfigSchema } = await import(new URL('schema.js', dist).href);
const { AJV_OPTIONS } = await import(new URL('config-validator.js', dist).href);

const ajv = new Ajv({ ...AJV_OPTIONS, code: { source: true } });
addFormats(ajv);
writeFileSync(fileURLToPath(new URL('config-validator.cjs', dist)), standaloneCode(ajv, ajv.compile(ConfigSchema)));
