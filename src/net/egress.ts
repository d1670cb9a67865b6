import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { request, type Dispatcher } from 'undici';
import { isNoRecord, type DnsResolver } from '../dns/resolver.js';
import { TtlCache } from '../lib/ttl-cache.js';
import { agentFor } from './egress-agents.js';
import { EgressError, EgressRequestError, networkFailure } from './egress-errors.js';
import { connectTarget, isPublicAddress } from './ip-ranges.js';

export {
  EgressError,
  EgressRequestError,
  failureWord,
  type EgressFailure,
  type EgressReason,
  type FailureWord,
} from './egress-errors.js';
export { closeEgressAgents } from './egress-agents.js';

export interface EgressOptions {
  /** network.allow_private: tests only */
  allowPrivate: boolean;
  /** webhooks.ca_file contents (PEM), trusted besides Node's default roots */
  ca?: string | Buffer | null;
  /** every A and AAAA address of a host (through dns.resolvers) */
  resolve: (host: string) => Promise<string[]>;
  /** for the whole request: connection, headers and body (without maxBodyBytes, until the status); DNS has its own */
  timeoutMs: number;
  userAgent?: string;
}

export interface CheckedUrl {
  url: URL;
  /** the address the connection goes to: one that was checked */
  address: string;
  family: 4 | 6;
}

/**
 * The SSRF guard (CONTRACT §4): https only; the host resolved once through
 * dns.resolvers and every address it has checked (a name with one private
 * address among public ones is refused). The result names the address to
 * connect to, so a second, different DNS answer (rebinding) cannot move the
 * connection elsewhere.
 *
 * `localhost` is no name DNS answers (RFC 6761 §6.3): with allow_private it
 * is looked up as every local program does, through getaddrinfo and so the
 * hosts file; without, it is refused before any lookup.
 */
export async function checkUrl(
  raw: string,
  opts: Pick<EgressOptions, 'allowPrivate' | 'resolve'>,
): Promise<CheckedUrl> {
  const url = parseHttpsUrl(raw);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const local = isLocalhost(host);
  if (local && !opts.allowPrivate)
    throw new EgressError('private_address', `host ${host} is the loopback name, not a public address`);
  const addresses = isIP(host) ? [host] : await resolveHost(host, local ? systemLookup : opts.resolve);
  if (!opts.allowPrivate) {
    const bad = addresses.find((a) => !isPublicAddress(a));
    if (bad !== undefined)
      throw new EgressError('private_address', `resolves to ${bad}, which is not a public address`);
  }
  return { url, ...connectTarget(addresses[0])! };
}

function parseHttpsUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new EgressError('invalid_url', 'is not a valid URL');
  }
  if (url.protocol !== 'https:') throw new EgressError('not_https', 'must be an https URL');
  if (url.username || url.password) throw new EgressError('invalid_url', 'must not carry a user name or password');
  return url;
}

async function resolveHost(host: string, resolve: EgressOptions['resolve']): Promise<string[]> {
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch (e) {
    throw e instanceof EgressError ? e : new EgressError('dns_failure', `host ${host} could not be resolved`);
  }
  if (!addresses.length) throw new EgressError('dns_failure', `host ${host} has no address`);
  const odd = addresses.find((a) => !connectTarget(a));
  if (odd !== undefined)
    throw new EgressError('dns_failure', `host ${host} resolved to ${JSON.stringify(odd)}, which is not an address`);
  return addresses;
}

const isLocalhost = (host: string) => /^localhost\.?$/i.test(host);

async function systemLookup(host: string): Promise<string[]> {
  return (await lookup(host, { all: true })).map((a) => a.address);
}

/** A and AAAA through the appliance's resolver, in parallel; one family missing is fine, both missing is not. */
export function resolverLookup(resolver: DnsResolver, cacheMs = LOOKUP_CACHE_MS): (host: string) => Promise<string[]> {
  const orNone = (p: Promise<string[]>) =>
    p.catch((e: unknown) => {
      if (isNoRecord(e)) return [];
      throw e;
    });
  const cache = new TtlCache<string[]>(cacheMs, (found) => found.length > 0, Date.now, 1_000);
  return (host) => cache.get(host.toLowerCase(), () => lookupBoth(host));
  async function lookupBoth(host: string): Promise<string[]> {
    let found: string[];
    try {
      const [v4, v6] = await Promise.all([orNone(resolver.resolve4(host)), orNone(resolver.resolve6(host))]);
      found = [...v4, ...v6];
    } catch (e) {
      throw new EgressError(
        'dns_failure',
        `host ${host} could not be resolved (${(e as { code?: string }).code ?? (e as Error).message})`,
      );
    }
    if (!found.length) throw new EgressError('dns_failure', `host ${host} has no address`);
    return found;
  }
}

/**
 * A host's addresses are kept this long: an endpoint that takes thousands of
 * events a second asked DNS twice (A and AAAA) for each. Shorter than the TTL
 * of nearly any record, and the addresses are checked and pinned at every
 * request as before; failures are not kept.
 */
const LOOKUP_CACHE_MS = 5_000;

export interface EgressRequest {
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string | Buffer;
  /**
   * The largest answer the caller takes (an attachment): a larger one fails
   * the request (too_large). Without it the caller wants only the status (a
   * webhook, where a 2xx in time succeeds whatever the body): the first
   * GLANCE_BYTES are kept and the rest dropped unread, without failing.
   */
  maxBodyBytes?: number;
  /** abort from outside (shutdown) */
  signal?: AbortSignal;
}

export interface EgressResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** more came (or was on its way) than was kept; only without maxBodyBytes */
  truncated: boolean;
  durationMs: number;
  address: string;
}

/** what is kept of an answer whose size the caller did not bound */
export const GLANCE_BYTES = 4 * 1024;

/** checkUrl, then the request to the checked address. Rejects with EgressError or EgressRequestError. */
export async function guardedRequest(raw: string, init: EgressRequest, opts: EgressOptions): Promise<EgressResponse> {
  return requestChecked(await checkUrl(raw, opts), init, opts);
}

/**
 * The request itself, to the address of an earlier check. A redirect is an
 * answer like any other and is never followed (interface §6: it counts as a
 * failed delivery); undici's Agent neither follows redirects nor retries.
 */
export async function requestChecked(
  checked: CheckedUrl,
  init: EgressRequest,
  opts: EgressOptions,
): Promise<EgressResponse> {
  const started = performance.now();
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, opts.timeoutMs);
  const cutShort = () => controller.abort();
  init.signal?.addEventListener('abort', cutShort, { once: true });
  try {
    if (init.signal?.aborted) throw new EgressRequestError('aborted', 'the request was cut short');
    const res = await request(checked.url, {
      method: init.method,
      headers: requestHeaders(init.headers, opts.userAgent),
      body: init.body ?? null,
      dispatcher: agentFor(checked, opts.ca),
      signal: controller.signal,
    });
    const { body, truncated } =
      init.maxBodyBytes === undefined
        ? await glance(res, GLANCE_BYTES)
        : { body: await readCapped(res, init.maxBodyBytes), truncated: false };
    return {
      status: res.statusCode,
      headers: flatHeaders(res.headers),
      body,
      truncated,
      durationMs: Math.round(performance.now() - started),
      address: checked.address,
    };
  } catch (e) {
    if (e instanceof EgressRequestError) throw e;
    if (timedOut) throw new EgressRequestError('timeout', `no complete answer within ${opts.timeoutMs} ms (timeout)`);
    if (init.signal?.aborted) throw new EgressRequestError('aborted', 'the request was cut short');
    const err = e as Error & { code?: string; cause?: Error & { code?: string } };
    const message = err.cause?.message ? `${err.message}: ${err.cause.message}` : err.message;
    throw new EgressRequestError(networkFailure(err.code ?? err.cause?.code), message);
  } finally {
    clearTimeout(timer);
    init.signal?.removeEventListener('abort', cutShort);
  }
}

/**
 * Header names are case-insensitive (RFC 9110 §5.1) but undici sends
 * `user-agent` and `User-Agent` as two fields: the default goes in only
 * when the caller has none under any spelling. The caller's names are sent
 * as given (Service-Signature, CONTRACT §4).
 */
function requestHeaders(given: Record<string, string> = {}, userAgent: string | undefined): Record<string, string> {
  const hasOwn = Object.keys(given).some((name) => name.toLowerCase() === 'user-agent');
  return userAgent && !hasOwn ? { 'user-agent': userAgent, ...given } : { ...given };
}

/**
 * The start of an answer whose status is all that counts. Once the status
 * is in, a body that runs long, stalls past the timeout or breaks off does
 * not undo it; the connection is dropped rather than drained.
 */
async function glance(res: Dispatcher.ResponseData, keep: number): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of res.body) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size > keep) {
        truncated = true;
        break;
      }
    }
  } catch {
    truncated = true;
  }
  if (truncated) res.body.destroy();
  return { body: Buffer.concat(chunks).subarray(0, keep), truncated };
}

async function readCapped(res: Dispatcher.ResponseData, limit: number): Promise<Buffer> {
  const tooLarge = () => {
    res.body.destroy();
    return new EgressRequestError('too_large', `the answer is larger than ${limit} bytes`);
  };
  if (Number(res.headers['content-length']) > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += (chunk as Buffer).length;
    if (size > limit) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function flatHeaders(headers: Dispatcher.ResponseData['headers']): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v ?? '')]),
  );
}
