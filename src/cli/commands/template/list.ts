import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { getProject } from '../../../modules/account/projects/projects.service.js';
import { presentSummary } from '../../../modules/sending/templates/templates.presenter.js';
import { templateService } from '../../../modules/sending/templates/templates.service.js';

export default class TemplateList extends BaseCommand {
  static override description = 'List the templates of a project with their latest version';
  static override examples = ['<%= config.bin %> template list --project prj_01j…'];
  static override flags = { project: Flags.string({ description: 'project id', required: true }) };
  protected override columns = ['id', 'name', 'latest_version', 'versions', 'created_at'];

  protected async execute() {
    const { flags } = await this.parse(TemplateList);
    return this.withStore(flags.config, async (deps) => {
      await getProject(deps, flags.project);
      return (await templateService(deps).list(flags.project)).map(presentSummary);
    });
  }
}
