import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { presentDomain } from '../../../modules/deliverability/domains/domains.presenter.js';
import { describeDomain, listDomains } from '../../../modules/deliverability/domains/domains.service.js';
import { getProject } from '../../../modules/account/projects/projects.service.js';

export default class DomainList extends BaseCommand {
  static override description = 'List the sending domains of a project';
  static override examples = ['<%= config.bin %> domain list --project prj_01j…'];
  static override flags = { project: Flags.string({ description: 'project id', required: true }) };
  protected override columns = ['id', 'domain', 'status', 'verified_at', 'last_checked_at', 'failure_reason'];

  protected async execute() {
    const { flags } = await this.parse(DomainList);
    return this.withStore(flags.config, async (deps) => {
      await getProject(deps, flags.project);
      const domains = await listDomains(deps, flags.project);
      return Promise.all(domains.map(async (d) => presentDomain(await describeDomain(deps, d))));
    });
  }
}
