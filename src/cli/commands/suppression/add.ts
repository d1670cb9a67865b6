import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { presentSuppression } from '../../../modules/sending/suppressions/suppressions.presenter.js';
import { suppressAddress } from '../../../modules/sending/suppressions/suppressions.service.js';

export default class SuppressionAdd extends BaseCommand {
  static override description = 'Suppress an address: the project sends nothing more to it';
  static override examples = ['<%= config.bin %> suppression add --project prj_01j… someone@example.com'];
  static override flags = { project: Flags.string({ description: 'project id', required: true }) };
  static override args = { address: Args.string({ description: 'email address', required: true }) };

  protected async execute() {
    const { args, flags } = await this.parse(SuppressionAdd);
    return this.withStore(flags.config, async (deps) => {
      const { suppression } = await suppressAddress(deps, flags.project, args.address, 'manual', 'address');
      return presentSuppression(suppression);
    });
  }
}
