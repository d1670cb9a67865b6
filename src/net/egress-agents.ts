import { createHash } from 'node:crypto';
import type { LookupFunction } from 'node:net';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import { Agent } from 'undici';

// The connections of guarded requests (egress.ts), pinned to the address the
// SSRF check approved: the pool is where that pin is kept.

// One keep-alive Agent per (checked address, CA), least recently used
// dropped first. Its lookup can only ever answer that address, so a pooled
// connection cannot reach anything else, while the many events of one
// endpoint share connections instead of paying a TLS handshake each.
// Connections per origin are not capped here: the callers cap concurrency
// (the dispatcher per endpoint and in all), and every endpoint of one host
// shares an origin, so a cap here would queue a fast endpoint's requests
// behind a slow one's while their timeout clocks run.
const agents = new Map<string, Agent>();
const MAX_AGENTS = 64;

export function agentFor(checked: { address: string; family: 4 | 6 }, ca: string | Buffer | null | undefined): Agent {
  const key = `${checked.address}|${ca ? createHash('sha256').update(ca).digest('hex') : ''}`;
  const cached = agents.get(key);
  agents.delete(key);
  const agent =
    cached ??
    new Agent({
      // the URL's host name still goes to TLS as SNI and for the certificate check
      connect: {
        lookup: pinnedLookup(checked.address, checked.family),
        ...(ca ? { secureContext: trustingAlso(ca) } : {}),
      },
      keepAliveTimeout: 10_000,
      keepAliveMaxTimeout: 60_000,
      connections: null,
    });
  agents.set(key, agent);
  if (agents.size > MAX_AGENTS) {
    const [oldest, old] = agents.entries().next().value as [string, Agent];
    agents.delete(oldest);
    // close() lets requests already on it finish
    old.close().catch(() => undefined);
  }
  return agent;
}

/**
 * Node's roots plus the extra CA, made once per agent: a `ca` option instead
 * would have every connection parse the whole root store again (tens of
 * milliseconds of CPU per TLS handshake).
 */
function trustingAlso(ca: string | Buffer): SecureContext {
  return createSecureContext({ ca: [...rootCertificates, ca.toString()] });
}

function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return (_host, options, callback) => {
    // net.connect asks for the whole list when autoSelectFamily is on (the default since Node 20)
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

/** Close the pooled connections (at shutdown); later requests open new ones. */
export async function closeEgressAgents(): Promise<void> {
  const all = [...agents.values()];
  agents.clear();
  await Promise.allSettled(all.map((a) => a.close()));
}
