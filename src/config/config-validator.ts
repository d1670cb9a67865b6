import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Ajv as AjvClass, ValidateFunction } from 'ajv';
import type addFormatsModule from 'ajv-formats';
import { ConfigSchema, type RawConfig } from './schema.js';

/** How the config is validated: defaults filled in, the first error only, a schema mistake an error. */
export const AJV_OPTIONS = { useDefaults: true, allErrors: false, strict: true } as const;

const require = createRequire(import.meta.url);

/**
 * The config's validator. `npm run build` writes it as code beside this
 * module (scripts/config-validator.mjs, ajv's standalone output): compiling
 * the schema took ~170 ms of each CLI call's and each serve's start, about
 * a sixth of a `posthorn` command. Run from the sources (tsx), where there
 * is no such file, the schema is compiled here, with the same options.
 */
export function configValidator(): ValidateFunction<RawConfig> {
  const built = fileURLToPath(new URL('./config-validator.cjs', import.meta.url));
  if (existsSync(built)) return require(built) as ValidateFunction<RawConfig>;
  const { Ajv } = require('ajv') as { Ajv: typeof AjvClass };
  const addFormats = require('ajv-formats') as typeof addFormatsModule.default;
  const ajv = new Ajv(AJV_OPTIONS);
  addFormats(ajv);
  return ajv.compile<RawConfig>(ConfigSchema);
}
