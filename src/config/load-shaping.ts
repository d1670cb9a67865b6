import { isIP } from 'node:net';
import { parseDuration } from '../lib/duration.js';
import { ConfigError, type Config } from './config.js';
import type { RawConfig } from './schema.js';

type Shaping = Pick<Config['outbound'], 'shaping' | 'providers' | 'backoff' | 'ips' | 'bulkPool' | 'warmupSchedule'>;

/** The outbound keys of traffic shaping, checked beyond what the schema says: patterns compile, addresses are IPs, names are unique. */
export function outboundShaping(o: RawConfig['outbound']): Shaping {
  const names = new Set<string>();
  const providers = o.providers.map((p, i) => {
    if (names.has(p.name)) throw new ConfigError(`config key "outbound.providers[${i}].name" repeats "${p.name}"`);
    names.add(p.name);
    return {
      name: p.name,
      // a suffix matches whole labels: "mx.example.net" is taken as ".mx.example.net"
      mxSuffixes: p.mx_suffixes.map((s) => (s.startsWith('.') ? s : `.${s}`).toLowerCase().replace(/\.$/, '')),
      ...(p.max_connections !== undefined ? { maxConnections: p.max_connections } : {}),
      ...(p.max_messages_per_minute !== undefined ? { maxMessagesPerMinute: p.max_messages_per_minute } : {}),
      ...(p.max_messages_per_connection !== undefined
        ? { maxMessagesPerConnection: p.max_messages_per_connection }
        : {}),
      ...(p.warmup !== undefined ? { warmup: p.warmup } : {}),
    };
  });
  const backoff = o.backoff.map((b, i) => {
    try {
      new RegExp(b.reply_pattern, 'i');
    } catch (e) {
      throw new ConfigError(
        `config key "outbound.backoff[${i}].reply_pattern" is not a valid regular expression: ${(e as Error).message}`,
      );
    }
    return { provider: b.provider ?? null, replyPattern: b.reply_pattern, suspendForMs: parseDuration(b.suspend_for) };
  });
  const seen = new Set<string>();
  const ips = o.ips.map((ip, i) => {
    if (!isIP(ip.address))
      throw new ConfigError(`config key "outbound.ips[${i}].address" is not an IP address: "${ip.address}"`);
    if (seen.has(ip.address)) throw new ConfigError(`config key "outbound.ips[${i}].address" repeats ${ip.address}`);
    seen.add(ip.address);
    return { address: ip.address, ehlo: ip.ehlo ?? o.hostname, pool: ip.pool ?? 'default', warmup: ip.warmup ?? false };
  });
  const pools = new Set(ips.map((ip) => ip.pool));
  if (o.bulk_pool !== null && !pools.has(o.bulk_pool))
    throw new ConfigError(`config key "outbound.bulk_pool" names "${o.bulk_pool}", a pool no outbound.ips entry is in`);
  return { shaping: o.shaping, providers, backoff, ips, bulkPool: o.bulk_pool, warmupSchedule: o.warmup_schedule };
}
