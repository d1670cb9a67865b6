import { BaseCommand } from '../../base.js';
import { presentProject } from '../../../modules/account/projects/projects.presenter.js';
import { listProjects } from '../../../modules/account/projects/projects.service.js';

export default class ProjectList extends BaseCommand {
  static override description = 'List projects';
  static override examples = ['<%= config.bin %> project list --json'];
  protected override columns = ['id', 'name', 'approved', 'suspended', 'limits', 'created_at'];

  protected async execute() {
    const { flags } = await this.parse(ProjectList);
    return this.withStore(flags.config, async (deps) => (await listProjects(deps)).map(presentProject));
  }
}
