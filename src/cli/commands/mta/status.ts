import { BaseCommand } from '../../base.js';
import { mtaStatus } from '../../../modules/deliverability/shaping/mta-status.service.js';

export default class MtaStatus extends BaseCommand {
  static override description =
    "Show each mailbox provider the MTA sent to in the last 24 hours, per source IP: open or suspended (until when, and the reply that did it), its rate while it climbs back, mail queued for it, and the last hour's outcomes";
  static override examples = ['<%= config.bin %> mta status', '<%= config.bin %> mta status --json'];

  protected async execute() {
    const { flags } = await this.parse(MtaStatus);
    return this.withStore(flags.config, ({ store, clock, config }) =>
      mtaStatus(store, clock.now(), { ips: config.outbound.ips, warmupSchedule: config.outbound.warmupSchedule }),
    );
  }

  protected override async render(result: Awaited<ReturnType<typeof mtaStatus>>): Promise<void> {
    if (result.ips.length)
      process.stdout.write(
        this.renderTable(
          result.ips.map((ip) => ({
            'source ip': ip.address,
            ehlo: ip.ehlo,
            pool: ip.pool,
            'warm-up': ip.warmup ? `day ${ip.warmup_day ?? 1}, ${ip.daily_cap ?? 'no'} cap per provider` : 'warm',
            'sent today': Object.entries(ip.sent_today)
              .map(([p, n]) => `${p} ${n}`)
              .join(', '),
          })),
        ) + '\n',
      );
    if (!result.providers.length) {
      process.stdout.write('No mail sent to any provider in the last 24 hours.\n');
      return;
    }
    const rows = result.providers.map((p) => ({
      provider: p.name,
      'source ip': p.source_ip ?? 'default',
      state: p.state === 'suspended' ? `suspended until ${p.until}` : p.state,
      rate: p.rate_per_minute === null ? '' : `${p.rate_per_minute}/min`,
      queued: p.queued,
      'delivered 1h': p.last_hour.delivered,
      'deferred 1h': p.last_hour.deferred,
      'throttled 1h': p.last_hour.throttled,
      reason: p.reason ?? '',
    }));
    process.stdout.write(this.renderTable(rows));
  }
}
