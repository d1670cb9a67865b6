import { presentDomain } from '../../../modules/deliverability/domains/domains.presenter.js';
import { Args } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { describeDomain, getDomainById } from '../../../modules/deliverability/domains/domains.service.js';

export default class DomainShow extends BaseCommand {
  static override description = 'Show a domain with the DNS records to publish and the last check';
  static override examples = ['<%= config.bin %> domain show dom_01j…'];
  static override args = { id: Args.string({ description: 'domain id (dom_…)', required: true }) };

  protected async execute() {
    const { args, flags } = await this.parse(DomainShow);
    return this.withStore(flags.config, async (deps) => {
      return presentDomain(await describeDomain(deps, await getDomainById(deps, args.id)));
    });
  }

  protected override async render(result: unknown): Promise<void> {
    const d = result as ReturnType<typeof presentDomain>;
    const { records, ...rest } = d;
    process.stdout.write(
      this.renderObject({ ...rest, dns_summary: d.dns_summary, tracking: d.tracking }) +
        '\nDNS records:\n' +
        this.renderTable(records, ['required', 'type', 'name', 'value', 'dns']),
    );
  }
}
