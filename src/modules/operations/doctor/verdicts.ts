// `posthorn doctor`'s verdicts: what was seen → ok, warn or fail, with what
// to do about it. No I/O here: probes.ts looks, these judge, so every verdict
// is a table test away. This file: the report's shape and the verdicts on how
// the world reaches this machine (port 25 out, reverse DNS, the DKIM zone's
// delegation); machine-verdicts.ts judges the machine itself.

export type CheckStatus = 'ok' | 'warn' | 'fail';
export type CheckName = 'port_25' | 'fcrdns' | 'source_ips' | 'tls' | 'dns_zone' | 'database' | 'disk' | 'event_loop';

export interface Check {
  name: CheckName;
  status: CheckStatus;
  message: string;
  /** what to do; null when there is nothing to do */
  hint: string | null;
}

export interface DoctorReport {
  /** false when any check failed; warnings leave it true */
  ok: boolean;
  checks: Check[];
}

export const check = (name: CheckName, status: CheckStatus, message: string, hint: string | null = null): Check => ({
  name,
  status,
  message,
  hint,
});

export function report(checks: Check[]): DoctorReport {
  return { ok: checks.every((c) => c.status !== 'fail'), checks };
}

/** How a connection to port 25 went: a greeting (its reply code and text) or why there was none. */
export type ProbeOutcome =
  | { kind: 'greeting'; code: number; text: string }
  | { kind: 'refused' | 'timeout' | 'unreachable' | 'no_address' | 'closed' | 'error'; detail: string };

export function judgeProbe(target: string | null, outcome: ProbeOutcome | null, relayMode: boolean): Check {
  if (!target || !outcome) {
    return check(
      'port_25',
      'warn',
      relayMode
        ? 'not run; outbound.mode is relay, so direct delivery does not need port 25'
        : 'not run: no --probe HOST given',
      'run posthorn doctor --probe HOST with the MX host of a domain you send to (e.g. the one `dig MX gmail.com` names): it connects to port 25 and reads the greeting',
    );
  }
  if (outcome.kind === 'greeting') {
    if (outcome.code === 220)
      return check('port_25', 'ok', `${target} answered: ${outcome.code} ${outcome.text}`.trim());
    return check(
      'port_25',
      'warn',
      `${target} is reachable but greeted with ${outcome.code} ${outcome.text}`.trim(),
      "the server refuses this machine's address: look it up on blocklists (e.g. Spamhaus) and check its PTR record",
    );
  }
  const blocked =
    'outbound TCP port 25 looks blocked: many hosting providers block it until asked; ask yours to open it, or send through a relay (outbound.mode: relay)';
  const hints: Record<Exclude<ProbeOutcome['kind'], 'greeting'>, string> = {
    refused: `nothing listens at ${target}, or a firewall rejects the connection; ${blocked}`,
    timeout: blocked,
    unreachable: `no route to ${target}: check this machine's network and firewall`,
    no_address: `the name has no A or AAAA record through dns.resolvers: check the name and dns.resolvers`,
    closed: `the server closed the connection without a greeting; try another host, or ${blocked}`,
    error: blocked,
  };
  return check('port_25', 'fail', `no SMTP greeting from ${target}: ${outcome.detail}`, hints[outcome.kind]);
}

/** outbound.hostname → its addresses → each address's PTR names. `error`: DNS did not answer. */
export type NameLookup = { kind: 'found'; values: string[] } | { kind: 'none' } | { kind: 'error'; detail: string };

export interface FcrdnsFacts {
  hostname: string;
  addresses: NameLookup;
  /** PTR lookups of each address found */
  ptrs: Array<{ address: string; names: NameLookup }>;
}

const sameName = (a: string, b: string) => a.replace(/\.$/, '').toLowerCase() === b.replace(/\.$/, '').toLowerCase();

export function judgeFcrdns(f: FcrdnsFacts): Check {
  const host = f.hostname;
  if (!host.includes('.') || /(^|\.)localhost$/i.test(host)) {
    return check(
      'fcrdns',
      'fail',
      `outbound.hostname is ${host}, which receiving servers cannot look up`,
      'set outbound.hostname to the public name of this machine (the name its PTR record gives)',
    );
  }
  if (f.addresses.kind === 'error')
    return check('fcrdns', 'fail', `DNS did not answer for ${host}: ${f.addresses.detail}`, 'check dns.resolvers');
  if (f.addresses.kind === 'none')
    return check(
      'fcrdns',
      'fail',
      `${host} has no A or AAAA record`,
      `publish an A (and AAAA, if this machine sends over IPv6) record for ${host} with this machine's address`,
    );
  const bad = f.ptrs.filter((p) => p.names.kind !== 'found' || !p.names.values.some((n) => sameName(n, host)));
  if (!bad.length) return check('fcrdns', 'ok', `${host} → ${f.addresses.values.join(', ')} → ${host}`);
  const seen = bad
    .map(
      ({ address, names }) =>
        `${address} has ${names.kind === 'found' ? `PTR ${names.values.join(', ')}` : names.kind === 'none' ? 'no PTR record' : `no PTR answer (${names.detail})`}`,
    )
    .join('; ');
  const fix = `ask whoever owns the address (usually the hosting provider) to set its reverse DNS to ${host}`;
  if (bad.length < f.ptrs.length)
    return check('fcrdns', 'warn', `${seen}; the other addresses point back to ${host}`, fix);
  return check(
    'fcrdns',
    'fail',
    `${seen}, not ${host}: receivers reject or junk mail whose sender's reverse DNS does not match`,
    fix,
  );
}

/** Each source IP of outbound.ips: its PTR names, and the addresses of the EHLO name it says. */
export interface SourceIpFacts {
  address: string;
  ehlo: string;
  ptr: NameLookup;
  ehloAddresses: NameLookup;
}

/**
 * Forward-confirmed reverse DNS of each outbound IP (outbound.ips): the address's PTR names its
 * EHLO name, and that name resolves back to the address. Receivers check both (Gmail, Microsoft
 * refuse or junk mail from an IP without it).
 */
export function judgeSourceIps(ips: SourceIpFacts[]): Check {
  const wrong = ips.flatMap((ip) => {
    const problems: string[] = [];
    if (ip.ptr.kind !== 'found' || !ip.ptr.values.some((n) => sameName(n, ip.ehlo)))
      problems.push(
        ip.ptr.kind === 'found'
          ? `PTR ${ip.ptr.values.join(', ')}, not ${ip.ehlo}`
          : ip.ptr.kind === 'none'
            ? 'no PTR record'
            : `no PTR answer (${ip.ptr.detail})`,
      );
    if (ip.ehloAddresses.kind !== 'found' || !ip.ehloAddresses.values.includes(ip.address))
      problems.push(`${ip.ehlo} does not resolve to it`);
    return problems.length ? [`${ip.address}: ${problems.join('; ')}`] : [];
  });
  if (!wrong.length) return check('source_ips', 'ok', ips.map((ip) => `${ip.address} ↔ ${ip.ehlo}`).join(', '));
  return check(
    'source_ips',
    'fail',
    `outbound.ips without forward-confirmed reverse DNS: ${wrong.join(' | ')}`,
    'for each address, set its PTR record to its ehlo name (ask whoever owns the address) and publish an A or AAAA record of that name with the address',
  );
}

export interface ZoneFacts {
  zone: string;
  hostname: string;
  serverEnabled: boolean;
  /** the NS records of the zone, through dns.resolvers */
  nameServers: NameLookup;
  /** addresses of outbound.hostname, and of each name server named */
  hostAddresses: string[];
  nameServerAddresses: Array<{ name: string; addresses: string[] }>;
}

export function judgeZone(f: ZoneFacts): Check {
  const delegate = `delegate it at its parent: ${f.zone}. NS ${f.hostname}. (with an A record for ${f.hostname}), so the DKIM CNAMEs of sending domains resolve`;
  if (!f.serverEnabled)
    return check(
      'dns_zone',
      'warn',
      `dns.server.enabled is false: nothing here answers for ${f.zone}`,
      `set dns.server.enabled: true (port 53 reachable from the internet) and ${delegate}`,
    );
  if (f.nameServers.kind === 'error')
    return check(
      'dns_zone',
      'fail',
      `no answer for the NS records of ${f.zone}: ${f.nameServers.detail}`,
      `check that the built-in DNS server answers on port 53 from outside, and ${delegate}`,
    );
  if (f.nameServers.kind === 'none')
    return check('dns_zone', 'fail', `${f.zone} is not delegated: DNS has no NS record for it`, delegate);
  const names = f.nameServers.values;
  const ours = (n: { name: string; addresses: string[] }) =>
    sameName(n.name, f.hostname) || n.addresses.some((a) => f.hostAddresses.includes(a));
  if (names.some((n) => sameName(n, f.hostname)) || f.nameServerAddresses.some(ours))
    return check('dns_zone', 'ok', `${f.zone} is delegated to ${names.join(', ')}`);
  return check(
    'dns_zone',
    'warn',
    `${f.zone} is delegated to ${names.join(', ')}, which is not ${f.hostname} nor at its address`,
    `if those servers are not this appliance, ${delegate}`,
  );
}
