import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { presentSuppression } from '../../../modules/sending/suppressions/suppressions.presenter.js';
import { listSuppressed } from '../../../modules/sending/suppressions/suppressions.service.js';

export default class SuppressionList extends BaseCommand {
  static override description = 'List the suppressed addresses of a project';
  static override examples = ['<%= config.bin %> suppression list --project prj_01j…'];
  static override flags = { project: Flags.string({ description: 'project id', required: true }) };
  protected override columns = ['email', 'reason', 'created_at'];

  protected async execute() {
    const { flags } = await this.parse(SuppressionList);
    return this.withStore(flags.config, async (deps) =>
      (await listSuppressed(deps, flags.project)).map(presentSuppression),
    );
  }
}
