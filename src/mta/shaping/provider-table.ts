import { getDomain } from 'tldts';
import type { BackoffConfig, ProviderConfig } from '../../config/config.js';
import { BUILTIN_BACKOFF_RULES } from './builtin-backoff.js';
import { BUILTIN_PROVIDERS, UNKNOWN_PROVIDER_LIMITS, type ProviderDefinition } from './builtin-providers.js';
import type { LaneLimits } from './lane.js';

/** The provider an MX host belongs to, and the limits of each of its lanes. */
export interface Provider {
  name: string;
  limits: LaneLimits;
  /** whether warm-up schedules count messages to it */
  warmup: boolean;
  /** in the table (built in or configured), rather than named after the MX host's registrable domain */
  known: boolean;
}

export interface Throttle {
  suspendForMs: number;
  label: string;
}

interface Rule {
  provider: string | null;
  pattern: RegExp;
  suspendForMs: number;
  label: string;
}

/**
 * The providers mail is grouped by (the built-in table with outbound.providers over it), and the
 * backoff rules that read their replies (outbound.backoff first, then the built-in ones). An MX
 * host matches the longest suffix in the table; one in no provider is a provider of its own,
 * named after its registrable domain, so that the many small domains one ISP hosts share one set
 * of limits, the limits of outbound.max_connections_per_domain as before providers.
 */
export class ProviderTable {
  private readonly suffixes: Array<{ suffix: string; provider: Provider }>;
  private readonly rules: Rule[];
  private readonly byHost = new Map<string, Provider>();
  private readonly byName = new Map<string, Provider>();
  private readonly unknownLimits: LaneLimits;

  constructor(configured: ProviderConfig[], backoff: BackoffConfig[], unknownMaxConnections: number) {
    this.unknownLimits = {
      maxConnections: unknownMaxConnections,
      maxMessagesPerConnection: UNKNOWN_PROVIDER_LIMITS.maxMessagesPerConnection,
      maxMessagesPerMinute: UNKNOWN_PROVIDER_LIMITS.maxMessagesPerMinute,
    };
    const merged = new Map<string, Provider & { mxSuffixes: string[] }>();
    for (const p of BUILTIN_PROVIDERS) merged.set(p.name, fromDefinition(p));
    for (const c of configured) {
      const base = merged.get(c.name);
      merged.set(c.name, {
        name: c.name,
        mxSuffixes: c.mxSuffixes,
        known: true,
        warmup: c.warmup ?? base?.warmup ?? false,
        limits: {
          maxConnections: c.maxConnections ?? base?.limits.maxConnections ?? unknownMaxConnections,
          maxMessagesPerMinute:
            c.maxMessagesPerMinute !== undefined ? c.maxMessagesPerMinute : (base?.limits.maxMessagesPerMinute ?? null),
          maxMessagesPerConnection:
            c.maxMessagesPerConnection !== undefined
              ? c.maxMessagesPerConnection
              : (base?.limits.maxMessagesPerConnection ?? null),
        },
      });
    }
    for (const { mxSuffixes: _, ...p } of merged.values()) this.byName.set(p.name, p);
    this.suffixes = [...merged.values()]
      .flatMap(({ mxSuffixes, ...provider }) => mxSuffixes.map((suffix) => ({ suffix, provider })))
      .sort((a, b) => b.suffix.length - a.suffix.length);
    this.rules = [
      ...backoff.map((b) => ({
        provider: b.provider,
        pattern: new RegExp(b.replyPattern, 'i'),
        suspendForMs: b.suspendForMs,
        label: `outbound.backoff /${b.replyPattern}/`,
      })),
      ...BUILTIN_BACKOFF_RULES,
    ];
  }

  /** The provider of an MX host name (or address). */
  of(mxHost: string): Provider {
    const host = mxHost.toLowerCase().replace(/\.$/, '');
    let found = this.byHost.get(host);
    if (found) return found;
    const dotted = `.${host}`;
    found = this.suffixes.find((s) => dotted.endsWith(s.suffix))?.provider ?? {
      name: getDomain(host, { validHosts: ['localhost'] }) ?? host,
      limits: this.unknownLimits,
      warmup: false,
      known: false,
    };
    // MX names are few; a bound keeps a flood of odd names from growing it without end
    if (this.byHost.size > 10_000) this.byHost.clear();
    this.byHost.set(host, found);
    return found;
  }

  /** The limits of a provider by name (a provider in no table: those of unknown ones). */
  limitsOf(name: string): LaneLimits {
    return this.byName.get(name)?.limits ?? this.unknownLimits;
  }

  /** The backoff rule a reply from a provider matches, if any: the whole reply, code and enhanced status included. */
  throttleOf(provider: string, reply: string): Throttle | null {
    const rule = this.rules.find((r) => (r.provider === null || r.provider === provider) && r.pattern.test(reply));
    return rule ? { suspendForMs: rule.suspendForMs, label: rule.label } : null;
  }
}

function fromDefinition(p: ProviderDefinition): Provider & { mxSuffixes: string[] } {
  return {
    name: p.name,
    mxSuffixes: p.mxSuffixes,
    known: true,
    warmup: p.warmup,
    limits: {
      maxConnections: p.maxConnections,
      maxMessagesPerMinute: p.maxMessagesPerMinute,
      maxMessagesPerConnection: p.maxMessagesPerConnection,
    },
  };
}
