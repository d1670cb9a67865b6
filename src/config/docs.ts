import { ConfigSchema } from './schema.js';

interface Node {
  type?: string | string[];
  default?: unknown;
  description?: string;
  properties?: Record<string, Node>;
}

/** The Markdown table of every config key, written from the schema (docs/CONFIG.md). */
export function renderConfigTable(): string {
  const rows: string[] = ['| key | env | default | meaning |', '|---|---|---|---|'];
  const walk = (node: Node, path: string[]) => {
    for (const [name, child] of Object.entries(node.properties ?? {})) {
      const p = [...path, name];
      const isGroup =
        child.properties &&
        ([] as string[]).concat(child.type ?? []).includes('object') &&
        (child.default === undefined ||
          (typeof child.default === 'object' &&
            child.default !== null &&
            !Array.isArray(child.default) &&
            Object.keys(child.default).length === 0));
      if (isGroup) {
        walk(child, p);
        continue;
      }
      const env = `POSTHORN_${p.map((s) => s.toUpperCase()).join('__')}`;
      rows.push(
        `| \`${p.join('.')}\` | \`${env}\` | \`${JSON.stringify(child.default ?? null)}\` | ${child.description ?? ''} |`,
      );
      if (child.properties) walk(child, p);
    }
  };
  walk(ConfigSchema, []);
  return rows.join('\n') + '\n';
}

/** The whole of docs/CONFIG.md. */
export function configDoc(): string {
  return `# Configuration keys

Generated from \`src/config/schema.ts\` by \`npm run docs\`; do not edit by hand.
One YAML file: \`--config FILE\`, else \`POSTHORN_CONFIG\`, else \`config/default.yaml\`.
Relative paths resolve against the config file's folder. Durations: \`500ms\`, \`30s\`, \`5m\`, \`2h\`, \`3d\`.
Every key can be set by the environment variable shown; lists take \`a,b\` or \`["a","b"]\`.

${renderConfigTable()}`;
}
