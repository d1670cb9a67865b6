import { Args, Flags } from '@oclif/core';
import { BaseCommand, boolOption, parseBool } from '../../base.js';
import { presentProject } from '../../../modules/account/projects/projects.presenter.js';
import { setProject } from '../../../modules/account/projects/projects.service.js';
import { validationError } from '../../../lib/errors.js';

const limit = (description: string) => Flags.integer({ description: `${description} (0 = unlimited)`, min: 0 });

/** A pool must be one outbound.ips names (or "default"): a typo would leave the project's mail on no IP. */
function poolOf(name: string | undefined, ips: Array<{ pool: string }>): string | undefined {
  if (name === undefined || name === 'default' || ips.some((ip) => ip.pool === name)) return name;
  const known = [...new Set(ips.map((ip) => ip.pool))];
  throw validationError(
    'ip_pool',
    `no address of outbound.ips is in pool "${name}"${known.length ? ` (pools: ${known.join(', ')})` : '; outbound.ips is empty'}`,
  );
}

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
    'ip-pool': Flags.string({
      description:
        'the pool of outbound.ips its mail leaves from (broadcasts: outbound.bulk_pool when set); "default" the pool of IPs without one',
    }),
  };

  protected async execute() {
    const { args, flags } = await this.parse(ProjectSet);
    return this.withStore(flags.config, async ({ config, ...deps }) =>
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
          ipPool: poolOf(flags['ip-pool'], config.outbound.ips),
        }),
      ),
    );
  }
}
