import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { reviewSuppressions } from '../../../modules/sending/suppressions/review.js';

export default class SuppressionsReview extends BaseCommand {
  static override description =
    "Read every bounce suppression's bounce again with today's classifier and list those that now read soft (the address is not gone); --release removes them";
  static override examples = [
    '<%= config.bin %> suppressions review',
    '<%= config.bin %> suppressions review --project prj_01j… --release --json',
  ];
  static override flags = {
    project: Flags.string({ description: 'only this project (default: every project)' }),
    release: Flags.boolean({ description: 'remove the suppressions whose bounce now reads soft', default: false }),
    all: Flags.boolean({ description: 'list every bounce suppression, not only those that now read soft' }),
  };
  protected override columns = ['project_id', 'email', 'suppressed_for', 'reason', 'bounce_type', 'released'];

  protected async execute() {
    const { flags } = await this.parse(SuppressionsReview);
    return this.withStore(flags.config, async (deps) => {
      const reviewed = await reviewSuppressions(deps, { projectId: flags.project, release: flags.release });
      return flags.all ? reviewed : reviewed.filter((r) => r.releasable);
    });
  }
}
