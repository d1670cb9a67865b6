import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { presentProject } from '../../../modules/account/projects/projects.presenter.js';
import { createProject } from '../../../modules/account/projects/projects.service.js';

export default class ProjectCreate extends BaseCommand {
  static override description = 'Create a project (not approved for live sending unless --approved)';
  static override examples = ['<%= config.bin %> project create --name shop --approved'];
  static override flags = {
    name: Flags.string({ description: 'project name (unique)', required: true }),
    approved: Flags.boolean({ description: 'approve live sending now' }),
  };

  protected async execute() {
    const { flags } = await this.parse(ProjectCreate);
    return this.withStore(flags.config, async (deps) =>
      presentProject(await createProject(deps, { name: flags.name, approved: flags.approved })),
    );
  }
}
