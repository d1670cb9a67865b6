import { Args } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { presentDomain } from '../../../modules/deliverability/domains/domains.presenter.js';
import { describeDomain, getDomainByIdOrName } from '../../../modules/deliverability/domains/domains.service.js';
import { startRotation } from '../../../modules/deliverability/domains/dkim-rotation.service.js';

export default class DomainRotateDkim extends BaseCommand {
  static override description =
    'Publish a new DKIM key on a free selector of the domain now; signing moves to it once the zone has served it longer than dkim.key_ttl and dns.resolvers see it (the dkim_rotation job), and the old key stays published for dkim.retire_after';
  static override examples = [
    '<%= config.bin %> domain rotate-dkim example.com',
    '<%= config.bin %> domain rotate-dkim dom_01j…',
  ];
  static override args = { domain: Args.string({ description: 'domain name or id (dom_…)', required: true }) };

  protected async execute() {
    const { args, flags } = await this.parse(DomainRotateDkim);
    return this.withStore(flags.config, async (deps) => {
      const d = await startRotation(deps, await getDomainByIdOrName(deps, args.domain.trim()));
      return presentDomain(await describeDomain(deps, d));
    });
  }
}
