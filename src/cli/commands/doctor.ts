import { Flags } from '@oclif/core';
import { BaseCommand } from '../base.js';
import {
  DOCTOR_TIMEOUTS,
  metricsUrlOf,
  parseProbeTarget,
  runDoctor,
} from '../../modules/operations/doctor/doctor.service.js';
import type { Check, DoctorReport } from '../../modules/operations/doctor/verdicts.js';

export default class Doctor extends BaseCommand {
  static override description = [
    'Check what delivery depends on: port 25, reverse DNS, TLS, the DKIM zone, the database, disk space',
    '',
    'Checks outbound port 25 (with --probe), forward-confirmed reverse DNS of outbound.hostname through dns.resolvers,',
    'the smtp.tls certificate and key (or the self-signed one of listeners that face the network without it), the delegation of dns.zone, the database and its migrations, the free disk space under data_dir,',
    'and, when posthorn serve runs, the event-loop lag of its threads (from its /metrics; warns over 100 ms).',
    'Each check is ok, warn or fail, with what to do. Exits 1 when any check fails.',
    'With --json: {"ok": bool, "checks": [{"name", "status": "ok"|"warn"|"fail", "message", "hint": string|null}]},',
    'names port_25, fcrdns, tls, dns_zone, database, disk, event_loop in that order. Progress goes to stderr.',
  ].join('\n');
  static override examples = [
    '<%= config.bin %> doctor --probe gmail-smtp-in.l.google.com',
    '<%= config.bin %> doctor --json --config /etc/posthorn/posthorn.yaml',
  ];
  static override flags = {
    probe: Flags.string({
      description:
        'a mail server to connect to on port 25 (HOST or HOST:PORT), to see that outbound SMTP is not blocked',
      helpValue: 'HOST[:PORT]',
    }),
  };

  protected async execute() {
    const { flags } = await this.parse(Doctor);
    const config = this.loadConfig(flags.config);
    const probe = flags.probe === undefined ? null : parseProbeTarget(flags.probe);
    // no migrateLatest here, unlike the other commands: pending migrations are one of the findings
    const store = this.openStore(config);
    try {
      process.stderr.write(
        `posthorn doctor: running ${config.outbound.ips.length ? 8 : 7} checks; the network ones give up after ${DOCTOR_TIMEOUTS.checkMs / 1000} s\n`,
      );
      const result = await runDoctor(
        {
          hostname: config.outbound.hostname,
          outboundMode: config.outbound.mode,
          sourceIps: config.outbound.ips,
          resolvers: config.dns.resolvers,
          zone: config.dns.zone,
          dnsServerEnabled: config.dns.server.enabled,
          tls: config.smtp.tls,
          smtpListeners: (['inbound', 'submission'] as const).map((name) => ({
            name,
            enabled: config.smtp[name].enabled,
            host: config.smtp[name].host,
            secure: !!config.smtp[name].secure,
          })),
          dataDir: config.dataDir,
          metricsUrl: metricsUrlOf(config.http, config.metrics),
          store,
          probe,
          now: Date.now(),
        },
        (c) => process.stderr.write(`  ${c.status.padEnd(4)} ${c.name}\n`),
      );
      if (!result.ok) process.exitCode = 1;
      return result;
    } finally {
      await store.close();
    }
  }

  protected override async render(result: unknown): Promise<void> {
    const { checks } = result as DoctorReport;
    const width = Math.max(...checks.map((c) => c.name.length));
    const line = (c: Check) =>
      `${c.status.toUpperCase().padEnd(4)}  ${c.name.padEnd(width)}  ${c.message}${c.hint ? `\n${' '.repeat(width + 8)}→ ${c.hint}` : ''}`;
    const count = (s: Check['status']) => checks.filter((c) => c.status === s).length;
    process.stdout.write(
      `${checks.map(line).join('\n')}\n\n${count('ok')} ok, ${count('warn')} warn, ${count('fail')} fail\n`,
    );
  }
}
