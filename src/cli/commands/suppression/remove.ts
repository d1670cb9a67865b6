import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { notFound } from '../../../lib/errors.js';
import { removeSuppression } from '../../../modules/suppressions/suppressions.repo.js';

export default class SuppressionRemove extends BaseCommand {
  static override description = 'Take an address off the suppression list';
  static override examples = ['<%= config.bin %> suppression remove --project prj_01j… someone@example.com'];
  static override flags = { project: Flags.string({ description: 'project id', required: true }) };
  static override args = { address: Args.string({ description: 'email address', required: true }) };

  protected async execute() {
    const { args, flags } = await this.parse(SuppressionRemove);
    const address = args.address.trim().toLowerCase();
    return this.withStore(flags.config, async (deps) => {
      if (!(await deps.store.tx((trx) => removeSuppression(trx, flags.project, address)))) throw notFound(`suppression of ${address}`);
      return { object: 'suppression', email: address, deleted: true };
    });
  }
}
