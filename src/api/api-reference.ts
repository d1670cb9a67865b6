import { ROUTES } from './routes.js';
import { servedRoutes } from './edge-routes.js';
import { openApiDocument } from './openapi.js';

// docs/openapi.json and docs/API.md, written by `npm run docs` from the same
// document GET /v1/openapi.json serves (the guardrail test keeps them current).

type Doc = ReturnType<typeof openApiDocument>;
type Operation = {
  summary: string;
  tags: string[];
  'x-scope'?: string;
  parameters?: Array<{
    name: string;
    in: string;
    required: boolean;
    schema: Record<string, unknown>;
    description?: string;
  }>;
  requestBody?: { content: { 'application/json': { schema: Schema } } };
};
type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  description?: string;
  enum?: unknown[];
  items?: Schema;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  pattern?: string;
};

/** The document as served with metrics on the API listener and no public URL. */
export function referenceDocument(version: string): Doc {
  return openApiDocument(servedRoutes(ROUTES, { version, publicUrl: null, metrics: true }), { version });
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function typeOf(s: Schema): string {
  if (s.enum) return s.enum.map((v) => `\`${String(v)}\``).join(' \\| ');
  const t = Array.isArray(s.type) ? s.type.join(' \\| ') : (s.type ?? 'any');
  return t === 'array' && s.items ? `array of ${typeOf(s.items)}` : t;
}

function constraints(s: Schema): string {
  const out: string[] = [];
  if (s.minimum !== undefined || s.maximum !== undefined) out.push(`${s.minimum ?? ''}..${s.maximum ?? ''}`);
  if (s.maxLength !== undefined) out.push(`max ${s.maxLength} chars`);
  if (s.pattern) out.push(`pattern \`${s.pattern}\``);
  if (s.default !== undefined) out.push(`default \`${JSON.stringify(s.default)}\``);
  return out.join(', ');
}

function fields(rows: Array<[string, Schema, boolean, string | undefined]>): string[] {
  if (!rows.length) return [];
  return [
    '',
    '| field | type | required | notes |',
    '|---|---|---|---|',
    ...rows.map(
      ([name, s, req, where]) =>
        `| \`${name}\`${where ? ` (${where})` : ''} | ${cell(typeOf(s))} | ${req ? 'yes' : ''} | ${cell([s.description, constraints(s)].filter(Boolean).join('; '))} |`,
    ),
  ];
}

function section(method: string, path: string, op: Operation): string[] {
  const lines = [
    `### ${method.toUpperCase()} ${path}`,
    '',
    `${op.summary}. ${op['x-scope'] ? `Scope \`${op['x-scope']}\`.` : 'No key.'}`,
  ];
  const params = (op.parameters ?? []).map(
    (p) => [p.name, p.schema as Schema, p.required, p.in] as [string, Schema, boolean, string],
  );
  const body = op.requestBody?.content['application/json'].schema;
  const bodyRows = Object.entries(body?.properties ?? {}).map(
    ([n, s]) => [n, s, (body?.required ?? []).includes(n), 'body'] as [string, Schema, boolean, string],
  );
  return [...lines, ...fields([...params, ...bodyRows]), ''];
}

export function apiReference(doc: Doc): string {
  const paths = doc.paths as Record<string, Record<string, Operation>>;
  const byTag = new Map<string, string[]>();
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const tag = op.tags[0];
      byTag.set(tag, [...(byTag.get(tag) ?? []), ...section(method, path, op)]);
    }
  }
  const toc = [...byTag.keys()].map((t) => `[${t}](#${t})`).join(' · ');
  return [
    '# HTTP API reference',
    '',
    "Generated from the routes' own schemas by `npm run docs`, like `GET /v1/openapi.json` (also in [openapi.json](openapi.json), which any OpenAPI viewer renders); do not edit by hand.",
    'Errors have the body `{"error": {"code", "message", "field"?}, "request_id"}` (`field` for validation errors only), and the `Request-Id` header carries the same `request_id`; unknown fields are refused. Answers and conventions are described in [http.md](http.md) and the pages it links.',
    '',
    toc,
    '',
    ...[...byTag.entries()].flatMap(([tag, lines]) => [`## ${tag}`, '', ...lines]),
  ].join('\n');
}
