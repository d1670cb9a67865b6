import { Args, Flags } from '@oclif/core';
import { BaseCommand, boolOption, parseBool } from '../../base.js';
import { presentProject } from '../../../modules/account/projects/projects.presenter.js';
import { setProject } from '../../../modules/account/projects/projects.service.js';

const limit = (description: string) => Flags.integer({ description: `${description} (0 = unlimited)`, min: 0 });

export default class ProjectSet extends BaseCommand {
  static override description = 'Change a project: approval, suspension and limits';
  static override examples = [
    '<%= config.bin %> project set prj_01j… --approved true --daily-limit 10000',
    '<%= config.bin %> project set prj_01j… --suspended true',
    '<%= config.bin %> project set prj_01j… --soft-bounce-suppression 3/30d',
  ];
  static override args = { id: Args.string({ description: 'project id', required: true }) };
  static override flags = {
    approved: boolOption('allow live sending'),
    suspended: boolOption('pause the project: every API call gets 403 account_suspended'),
    'daily-limit': limit('live recipients per UTC day'),
    'monthly-limit': limit('live recipients per UTC month'),
    'domain-limit': limit('sending domains'),
    'verify-limit': limit('address verifications per UTC month'),
    'bounce-suppression-days': Flags.integer({
      description: 'the suppressions live mail adds for hard bounces end after this many days (0 = never)',
      min: 0,
      max: 3650,
    }),
    'soft-bounce-suppression': Flags.string({
      description:
        'suppress an address after N soft bounces of a lasting reason (mailbox_full, suspended) within M days: "N/Md", e.g. "3/30d"; "off" (the default) never',
    }),
  };

  protected async execute() {
    const { args, flags } = await this.parse(ProjectSet);
    return this.withStore(flags.config, async (deps) =>
      presentProject(
        await setProject(deps, args.id, {
          approved: parseBool(flags.approved),
          suspended: parseBool(flags.suspended),
          limits: {
            daily: flags['daily-limit'],
            monthly: flags['monthly-limit'],
            domains: flags['domain-limit'],
            verifications: flags['verify-limit'],
          },
          bounceSuppressionDays: flags['bounce-suppression-days'],
          softBounceSuppression: flags['soft-bounce-suppression'],
        }),
      ),
    );
  }
}
