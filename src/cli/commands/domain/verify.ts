import { Args } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { presentDomain } from '../../../modules/domains/domains.presenter.js';
import { findDomainById } from '../../../modules/domains/domains.repo.js';
import { recordsOf, verifyDomain } from '../../../modules/domains/domains.service.js';
import { notFound } from '../../../lib/errors.js';

export default class DomainVerify extends BaseCommand {
  static override description = 'Check a domain\'s DNS records now (through dns.resolvers) and update its status';
  static override examples = ['<%= config.bin %> domain verify dom_01j…'];
  static override args = { id: Args.string({ description: 'domain id (dom_…)', required: true }) };

  protected async execute() {
    const { args, flags } = await this.parse(DomainVerify);
    return this.withStore(flags.config, async (deps) => {
      const d = await findDomainById(deps.store.knex, args.id);
      if (!d) throw notFound(`domain ${args.id}`);
      const after = await verifyDomain(deps, d);
      return presentDomain(after, await recordsOf(deps, after), deps.domains.trackingAvailable);
    });
  }
}
