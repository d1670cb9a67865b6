import { Args } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { presentDomain } from '../../../modules/deliverability/domains/domains.presenter.js';
import { describeDomain, getDomainById } from '../../../modules/deliverability/domains/domains.service.js';
import { verifyDomain } from '../../../modules/deliverability/domains/verification.service.js';

export default class DomainVerify extends BaseCommand {
  static override description = "Check a domain's DNS records now (through dns.resolvers) and update its status";
  static override examples = ['<%= config.bin %> domain verify dom_01j…'];
  static override args = { id: Args.string({ description: 'domain id (dom_…)', required: true }) };

  protected async execute() {
    const { args, flags } = await this.parse(DomainVerify);
    return this.withStore(flags.config, async (deps) => {
      return presentDomain(await describeDomain(deps, await verifyDomain(deps, await getDomainById(deps, args.id))));
    });
  }
}
