import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { validationError } from '../../../lib/errors.js';
import { iso } from '../../../lib/time.js';
import { parseAddress } from '../../../lib/address.js';
import { getProject } from '../../../modules/projects/projects.service.js';
import { addSuppression } from '../../../modules/suppressions/suppressions.repo.js';

export default class SuppressionAdd extends BaseCommand {
  static override description = 'Suppress an address: the project sends nothing more to it';
  static override examples = ['<%= config.bin %> suppression add --project prj_01j… someone@example.com'];
  static override flags = { project: Flags.string({ description: 'project id', required: true }) };
  static override args = { address: Args.string({ description: 'email address', required: true }) };

  protected async execute() {
    const { args, flags } = await this.parse(SuppressionAdd);
    const parsed = parseAddress(args.address);
    if (!parsed.ok) throw validationError('address', parsed.reason);
    const address = parsed.value.address.toLowerCase();
    return this.withStore(flags.config, async (deps) => {
      await getProject(deps, flags.project);
      const now = deps.clock.now();
      await deps.store.tx((trx) => addSuppression(trx, { projectId: flags.project, address, reason: 'manual', emailId: null, createdAt: now }));
      return { object: 'suppression', email: address, reason: 'manual', created_at: iso(now) };
    });
  }
}
