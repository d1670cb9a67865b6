import { isResendPath } from '../modules/compat/resend/resend-errors.js';
import type { TSchema } from '@sinclair/typebox';
import type { RouteDef } from '../lib/route.js';

// The OpenAPI 3.1 document of the routes the app registers, written from
// the same RouteDef list and the same TypeBox schemas the edge validates
// with: a route cannot be served without being documented, nor documented
// with fields it does not take. (Answers are described by their shape in
// words, not by schemas: the presenters are code, not schemas.)

export const OPENAPI_PATH = '/v1/openapi.json';

type JsonSchema = Record<string, unknown>;

/** TypeBox schemas carry symbol keys; the document wants plain JSON Schema. */
const plain = (s: TSchema): JsonSchema => JSON.parse(JSON.stringify(s)) as JsonSchema;

/** /v1/emails/:id → /v1/emails/{id} */
export const openApiPath = (koaPath: string) => koaPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');

function tagOf(path: string): string {
  if (path === OPENAPI_PATH || path === '/metrics') return 'operations';
  if (path.startsWith('/v1/')) return path.split('/')[2];
  return path.startsWith('/t/') ? 'tracking' : 'health';
}

const ERROR_BODY: JsonSchema = {
  type: 'object',
  required: ['error', 'request_id'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: {
          type: 'string',
          description: 'a machine-readable code, such as `validation_error`, `not_found` or `rate_limited`',
        },
        message: { type: 'string' },
        field: { type: 'string', description: 'the field at fault (validation errors only)' },
      },
    },
    request_id: { type: 'string', pattern: '^req_[0-9a-z]{26}$' },
  },
};

function parameters(r: RouteDef): JsonSchema[] {
  const out: JsonSchema[] = [...r.path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  if (r.query) {
    const q = plain(r.query) as { properties?: Record<string, JsonSchema>; required?: string[] };
    for (const [name, schema] of Object.entries(q.properties ?? {})) {
      const { description, ...rest } = schema;
      out.push({
        name,
        in: 'query',
        required: (q.required ?? []).includes(name) && rest.default === undefined,
        schema: rest,
        ...(description ? { description } : {}),
      });
    }
  }
  return out;
}

function operation(r: RouteDef): JsonSchema {
  const keyed = r.scope !== null;
  const op: JsonSchema = {
    operationId: `${r.method.toLowerCase()}${r.path.replace(/[/:{}.-]+(\w)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    summary: r.summary,
    tags: [tagOf(r.path)],
    security: keyed ? [{ apiKey: [] }] : [],
    responses: {
      '2XX': { description: 'success' },
      ...(keyed
        ? {
            '401': { $ref: '#/components/responses/Error' },
            '403': { $ref: '#/components/responses/Error' },
            '429': { $ref: '#/components/responses/Error' },
          }
        : {}),
      '4XX': { $ref: '#/components/responses/Error' },
      '5XX': { $ref: '#/components/responses/Error' },
    },
  };
  if (keyed) {
    op.description = `Needs an API key with the \`${r.scope}\` scope.`;
    op['x-scope'] = r.scope;
  }
  const params = parameters(r);
  if (params.length) op.parameters = params;
  if (r.body) op.requestBody = { required: true, content: { 'application/json': { schema: plain(r.body) } } };
  return op;
}

export function openApiDocument(
  routes: readonly RouteDef[],
  info: { version: string; serverUrl?: string | null },
): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  // the Resend-compatible surface is Resend's API, described by Resend and docs/resend.md: not here
  for (const r of routes)
    if (!isResendPath(r.path)) (paths[openApiPath(r.path)] ??= {})[r.method.toLowerCase()] = operation(r);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Posthorn',
      version: info.version,
      description:
        'A self-hosted transactional email appliance: sending, domains, templates, webhooks, verification, inbound mail.',
    },
    ...(info.serverUrl ? { servers: [{ url: info.serverUrl }] } : {}),
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'an API key: ph_live_… or ph_test_…' },
      },
      schemas: { Error: ERROR_BODY },
      responses: {
        Error: {
          description:
            'an error: `{"error": {"code", "message", "field"?}, "request_id"}`, with a `Request-Id` header of the same value',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
      },
    },
  };
}
