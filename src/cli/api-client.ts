import { Agent, request, type Dispatcher } from 'undici';
import type { Config } from '../config/config.js';
import { PACKAGE_VERSION } from '../config/package-root.js';
import { CliError } from './base.js';

// The HTTP API of a running `posthorn serve`, for the commands that work
// through it rather than on the database (`posthorn listen`): which key and
// which URL, and one JSON request helper whose failures are CliErrors with
// the API's own code and message.

/** The API key of the CLI's API calls (CONTRACT §7): never a config key. */
export const KEY_ENV = 'POSTHORN_KEY';
export const API_URL_ENV = 'POSTHORN_API_URL';

export interface ApiTarget {
  /** the API's base URL, without a trailing slash */
  url: string;
  key: string;
}

/** --key, else POSTHORN_KEY. */
export function apiKeyFrom(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const key = (flag ?? env[KEY_ENV])?.trim();
  if (!key)
    throw new CliError(
      'usage_error',
      `no API key: pass --key KEY or set ${KEY_ENV} (a key of your project, e.g. from \`posthorn key create\`)`,
    );
  return key;
}

/**
 * --api-url, else POSTHORN_API_URL, else the API listener of the config this
 * command reads, http://<http.host>:<http.port> (an address bound to every
 * interface is reached on loopback): the same config as the serve it talks
 * to, on the same machine. Not http.public_url: its default names port 8025
 * whatever http.port says, and behind a proxy it may not be reachable from
 * the server itself. The config is loaded only when it is needed.
 */
export function apiUrlFrom(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  config: () => Pick<Config, 'http'>,
): string {
  if (flag !== undefined) return baseUrl(flag, '--api-url');
  if (env[API_URL_ENV]) return baseUrl(env[API_URL_ENV], API_URL_ENV);
  const { http } = config();
  const host = http.host === '0.0.0.0' || http.host === '::' ? '127.0.0.1' : http.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${http.port}`;
}

function baseUrl(value: string, from: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError('usage_error', `${from}: ${JSON.stringify(value)} is not a URL (e.g. http://127.0.0.1:8025)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CliError('usage_error', `${from}: the API is reached over http or https, not ${url.protocol}`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** An answer's JSON; undefined when it is empty or not JSON. */
function parseAnswer(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/** An error answer of the API (`{"error": {"code", "message"}}`) as the CLI tells it. */
export function errorFromAnswer(status: number, body: unknown): CliError {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (error && typeof error.code === 'string' && typeof error.message === 'string')
    return new CliError(error.code, error.message);
  return new CliError(
    'api_error',
    `the API answered HTTP ${status} without an error body: is this the URL of posthorn serve?`,
  );
}

export class ApiClient {
  /** one connection pool, closed by close(): nothing keeps the process alive after the command */
  private readonly agent = new Agent();

  constructor(readonly target: ApiTarget) {}

  /** A JSON request; the parsed answer, or a CliError with the API's code and message. */
  async json<T>(
    method: Dispatcher.HttpMethod,
    path: string,
    body?: unknown,
    opts: { timeoutMs?: number } = {},
  ): Promise<T> {
    const res = await this.send(method, path, body, {
      headersTimeout: opts.timeoutMs ?? 30_000,
      bodyTimeout: opts.timeoutMs ?? 30_000,
    });
    const parsed = parseAnswer(await res.body.text());
    if (res.statusCode < 200 || res.statusCode > 299) throw errorFromAnswer(res.statusCode, parsed);
    return parsed as T;
  }

  /**
   * A GET whose answer is read as it comes (a stream): resolves with the body
   * once a 2xx's headers are in. `idleMs`: the longest silence before the
   * connection is taken for dead.
   */
  async stream(path: string, signal: AbortSignal, idleMs: number): Promise<AsyncIterable<Buffer>> {
    const res = await this.send('GET', path, undefined, {
      signal,
      headersTimeout: 30_000,
      bodyTimeout: idleMs,
      headers: { accept: 'text/event-stream' },
    });
    if (res.statusCode < 200 || res.statusCode > 299)
      throw errorFromAnswer(res.statusCode, parseAnswer(await res.body.text()));
    return res.body;
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  private async send(
    method: Dispatcher.HttpMethod,
    path: string,
    body: unknown,
    opts: { signal?: AbortSignal; headersTimeout: number; bodyTimeout: number; headers?: Record<string, string> },
  ): Promise<Dispatcher.ResponseData> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.target.key}`,
      'user-agent': `posthorn-cli/${PACKAGE_VERSION}`,
      ...opts.headers,
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      return await request(`${this.target.url}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        dispatcher: this.agent,
        signal: opts.signal,
        headersTimeout: opts.headersTimeout,
        bodyTimeout: opts.bodyTimeout,
      });
    } catch (e) {
      if (opts.signal?.aborted) throw e;
      throw new CliError(
        'api_unreachable',
        `could not reach the Posthorn API at ${this.target.url} (${describeFailure(e)}): is posthorn serve running there? Set --api-url or ${API_URL_ENV}`,
      );
    }
  }
}

/** A network failure in a few words: its code (ECONNREFUSED) rather than a stack. */
export function describeFailure(e: unknown): string {
  const err = e as { code?: unknown; cause?: { code?: unknown }; message?: string };
  const code =
    typeof err.code === 'string' && !err.code.startsWith('UND_ERR_')
      ? err.code
      : typeof err.cause?.code === 'string'
        ? err.cause.code
        : null;
  return code ?? err.message ?? String(e);
}
