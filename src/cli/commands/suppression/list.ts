import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { iso } from '../../../lib/time.js';
import { getProject } from '../../../modules/projects/projects.service.js';
import { listSuppressions } from '../../../modules/suppressions/suppressions.repo.js';

export default class SuppressionList extends BaseCommand {
  static override description = 'List the suppressed addresses of a project';
  static override examples = ['<%= config.bin %> suppression list --project prj_01j…'];
  static override flags = { project: Flags.string({ description: 'project id', required: true }) };
  protected override columns = ['email', 'reason', 'created_at'];

  protected async execute() {
    const { flags } = await this.parse(SuppressionList);
    return this.withStore(flags.config, async (deps) => {
      await getProject(deps, flags.project);
      return (await listSuppressions(deps.store.reader, flags.project)).map((s) => ({ object: 'suppression', email: s.address, reason: s.reason, created_at: iso(s.createdAt) }));
    });
  }
}
