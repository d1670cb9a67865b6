import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { presentSuppression } from '../../../modules/sending/suppressions/suppressions.presenter.js';
import { unsuppressAddress } from '../../../modules/sending/suppressions/suppressions.service.js';

export default class SuppressionRemove extends BaseCommand {
  static override description = 'Take an address off the suppression list';
  static override examples = ['<%= config.bin %> suppression remove --project prj_01j… someone@example.com'];
  static override flags = { project: Flags.string({ description: 'project id', required: true }) };
  static override args = { address: Args.string({ description: 'email address', required: true }) };

  protected async execute() {
    const { args, flags } = await this.parse(SuppressionRemove);
    return this.withStore(flags.config, async (deps) => ({
      ...presentSuppression(await unsuppressAddress(deps, flags.project, args.address)),
      deleted: true,
    }));
  }
}
