import { isIP, type LookupFunction } from 'node:net';
import { rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';
import { isNoRecord, type DnsResolver } from '../dns/resolver.js';
import { isPublicAddress } from './ip-ranges.js';

export interface EgressOptions {
  /** network.allow_private: tests only */
  allowPrivate: boolean;
  /** webhooks.ca_file contents, trusted besides the system roots */
  ca?: string | Buffer | null;
  /** every A and AAAA address of a host (through dns.resolvers) */
  resolve(host: string): Promise<string[]>;
  timeoutMs: number;
  userAgent?: string;
}

export type EgressReason = 'invalid_url' | 'not_https' | 'private_address' | 'dns_failure';

export class EgressError extends Error {
  constructor(
    readonly reason: EgressReason,
    message: string,
  ) {
    super(message);
    this.name = 'EgressError';
  }
}

export interface CheckedUrl {
  url: URL;
  /** the address the connection will go to: the one that was checked */
  address: string;
  family: 4 | 6;
}

/**
 * The SSRF guard (CONTRACT §4): https only; the host resolved once through
 * dns.resolvers and every address it has checked (a name with one private
 * address among public ones is refused); the connection then goes to the
 * checked address, so a second, different DNS answer (rebinding) cannot
 * redirect it.
 */
export async function checkUrl(raw: string, opts: Pick<EgressOptions, 'allowPrivate' | 'resolve'>): Promise<CheckedUrl> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new EgressError('invalid_url', 'is not a valid URL');
  }
  if (url.protocol !== 'https:') throw new EgressError('not_https', 'must be an https URL');
  if (url.username || url.password) throw new EgressError('invalid_url', 'must not carry a user name or password');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = await opts.resolve(host);
    } catch (e) {
      throw e instanceof EgressError ? e : new EgressError('dns_failure', `host ${host} could not be resolved`);
    }
    if (!addresses.length) throw new EgressError('dns_failure', `host ${host} has no address`);
  }
  if (!opts.allowPrivate) {
    const bad = addresses.find((a) => !isPublicAddress(a));
    if (bad !== undefined) throw new EgressError('private_address', `resolves to ${bad}, which is not a public address`);
  }
  const address = addresses[0]!;
  return { url, address, family: isIP(address) === 6 ? 6 : 4 };
}

/** A/AAAA through the appliance's resolver; one family missing is fine, both missing is not. */
export function resolverLookup(resolver: DnsResolver): (host: string) => Promise<string[]> {
  return async (host) => {
    const settle = (p: Promise<string[]>) => p.catch((e: unknown) => (isNoRecord(e) ? [] : Promise.reject(e)));
    try {
      const [v4, v6] = await Promise.all([settle(resolver.resolve4(host)), settle(resolver.resolve6(host))]);
      if (!v4.length && !v6.length) throw new EgressError('dns_failure', `host ${host} has no address`);
      return [...v4, ...v6];
    } catch (e) {
      throw e instanceof EgressError ? e : new EgressError('dns_failure', `host ${host} could not be resolved (${(e as { code?: string }).code ?? (e as Error).message})`);
    }
  };
}

export interface EgressResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  durationMs: number;
  address: string;
}

export interface EgressRequest {
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** larger answers are cut off with an error; default 64 KiB */
  maxBodyBytes?: number;
}

export async function guardedRequest(raw: string, init: EgressRequest, opts: EgressOptions): Promise<EgressResponse> {
  return requestChecked(await checkUrl(raw, opts), init, opts);
}

const agents = new Map<string, Agent>();
const MAX_AGENTS = 200;

/** One keep-alive agent per (host name, checked address, CA): its lookup can only ever answer that address. */
function agentFor(checked: CheckedUrl, ca: string | Buffer | null | undefined): Agent {
  const key = `${checked.url.hostname}|${checked.address}|${ca ? 'ca' : ''}`;
  let agent = agents.get(key);
  if (!agent) {
    const lookup: LookupFunction = (_host, options, callback) => {
      const cb = callback as (err: Error | null, address: string | Array<{ address: string; family: number }>, family?: number) => void;
      if ((options as { all?: boolean }).all) cb(null, [{ address: checked.address, family: checked.family }]);
      else cb(null, checked.address, checked.family);
    };
    agent = new Agent({ connect: { lookup, ...(ca ? { ca: [...rootCertificates, ca.toString()] } : {}) }, keepAliveTimeout: 10_000, connections: 8 });
    if (agents.size >= MAX_AGENTS) {
      const [oldKey, old] = agents.entries().next().value as [string, Agent];
      agents.delete(oldKey);
      void old.close().catch(() => undefined);
    }
    agents.set(key, agent);
  }
  return agent;
}

/** The request itself, to the address of a check; redirects are answers, never followed. */
export async function requestChecked(checked: CheckedUrl, init: EgressRequest, opts: EgressOptions): Promise<EgressResponse> {
  const started = performance.now();
  const limit = init.maxBodyBytes ?? 64 * 1024;
  const signal = AbortSignal.timeout(opts.timeoutMs);
  try {
    const res = await request(checked.url, {
      method: init.method,
      headers: { ...(opts.userAgent ? { 'user-agent': opts.userAgent } : {}), ...init.headers },
      body: init.body ?? null,
      dispatcher: agentFor(checked, opts.ca),
      signal,
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > limit) {
        res.body.destroy();
        throw new Error(`the answer is larger than ${limit} bytes`);
      }
      chunks.push(chunk as Buffer);
    }
    const headers = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v ?? '')]));
    return { status: res.statusCode, headers, body: Buffer.concat(chunks), durationMs: Math.round(performance.now() - started), address: checked.address };
  } catch (e) {
    if (signal.aborted) throw new Error(`no complete answer within ${opts.timeoutMs} ms (timeout)`);
    const err = e as Error & { code?: string; cause?: Error & { code?: string } };
    throw new Error(err.cause?.message ? `${err.message}: ${err.cause.message}` : err.message);
  }
}
