import YAML from 'yaml';
import { ConfigError } from './config.js';
import { ConfigSchema } from './schema.js';

/** POSTHORN_* variables that are not config keys: the CLI's API key and URL among them. */
const NON_CONFIG_ENV = new Set([
  'POSTHORN_CONFIG',
  'POSTHORN_TEST_PG_URL',
  'POSTHORN_PROJECT',
  'POSTHORN_KEY',
  'POSTHORN_API_URL',
]);

interface SchemaNode {
  type?: string | string[];
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
}

/**
 * POSTHORN_<KEY>[__<SUBKEY>…] overrides a config key (CONTRACT §2): e.g.
 * POSTHORN_HTTP__PORT=9000 → http.port = 9000. The namespace is the
 * config's top-level keys: a variable whose first segment names one is an
 * override, and a mistake in the rest of it stops the program as a mistake in
 * the file does. Any other POSTHORN_* variable (POSTHORN_KEY, a compose file's
 * POSTHORN_PUBLIC_URL) is not ours to read: it is ignored, with a warning.
 * The value is read according to the key's type in the schema, so `true`,
 * `9000`, `1m,5m` and `["1m","5m"]` all mean what they say. Returns key path
 * → variable name, so that an error can say where a bad value came from.
 */
export function applyEnvOverrides(
  raw: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  warn: (message: string) => void = () => {},
): Map<string, string> {
  const sources = new Map<string, string>();
  const schema = ConfigSchema as unknown as SchemaNode;
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith('POSTHORN_') || NON_CONFIG_ENV.has(name)) continue;
    const path = name
      .slice('POSTHORN_'.length)
      .split('__')
      .map((s) => s.toLowerCase());
    if (!path[0] || !schema.properties?.[path[0]]) {
      warn(
        `environment variable ${name} ignored: it names no config key (an override is POSTHORN_ and the key path upper-cased with __ between levels, e.g. POSTHORN_HTTP__PORT)`,
      );
      continue;
    }
    let node: SchemaNode | undefined = schema;
    for (const seg of path) node = node?.properties?.[seg];
    if (!node || path.some((s) => !s))
      throw new ConfigError(`unknown config key "${path.join('.')}" (from environment variable ${name})`);
    const key = path.join('.');
    sources.set(key, name);
    setPath(raw, path, readEnvValue(env[name] ?? '', node), key, name);
  }
  return sources;
}

function readEnvValue(text: string, node: SchemaNode): unknown {
  const types = ([] as string[]).concat(node.type ?? 'string');
  if (types.includes('null') && (text === '' || text === 'null')) return null;
  if (types.includes('integer') || types.includes('number'))
    return /^-?[0-9]+(\.[0-9]+)?$/.test(text) ? Number(text) : text;
  if (types.includes('boolean')) return text === 'true' ? true : text === 'false' ? false : text;
  if (types.includes('array')) {
    const t = text.trim();
    if (t.startsWith('[')) {
      try {
        return YAML.parse(t);
      } catch {
        return text;
      }
    }
    return t === '' ? [] : t.split(',').map((s) => s.trim());
  }
  return text;
}

function setPath(obj: Record<string, unknown>, path: string[], value: unknown, key: string, envName: string): void {
  let cur = obj;
  for (const seg of path.slice(0, -1)) {
    const next = cur[seg];
    if (next == null) cur[seg] = {};
    else if (typeof next !== 'object' || Array.isArray(next))
      throw new ConfigError(`config key "${key}" cannot be set by ${envName}: its parent is not a mapping`);
    cur = cur[seg] as Record<string, unknown>;
  }
  cur[path[path.length - 1]] = value;
}
